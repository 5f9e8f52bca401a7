import { convertRaTranslationsToI18next } from 'ra-i18n-i18next';
import englishMessages from 'ra-language-english';

/**
 * English. react-admin's own strings (ra.*) come from ra-language-english, converted to i18next's
 * `{{name}}` interpolation and `_one`/`_other` plurals; zh.ts must have every key of this file.
 */
export const en = {
  ...convertRaTranslationsToI18next(englishMessages),

  common: {
    loading: 'Loading…',
    retry: 'Retry',
    confirm: 'Confirm',
    cancel: 'Cancel',
    close: 'Close',
    not_built: 'Not built yet: {{section}}',
  },

  http: {
    too_many_requests: 'Too many requests, please try again later',
    server_error: 'Internal server error, please contact the administrator',
    demo_only: 'This site is for demonstration only, there is no server',
  },

  status: {
    unreachable: 'Unable to connect to the server',
    load_failed: 'Failed to load the status',
    setup_failed: 'Failed to fetch the setup status',
  },

  shell: {
    nav: {
      home: 'Home',
      console: 'Console',
      pricing: 'Pricing',
      docs: 'Docs',
      about: 'About',
    },
    badge: {
      self_use: 'Self-use mode',
      demo: 'Demo site',
    },
    theme: {
      to_dark: 'Switch to dark mode',
      to_light: 'Switch to light mode',
    },
    language: 'Language',
    new_year: 'Happy New Year!',
    account: {
      login: 'Log in',
      register: 'Register',
      logout: 'Log out',
      logout_success: 'Logout successful',
      menu: 'Account',
    },
    menu: {
      toggle: 'Collapse or expand the side menu',
      playground: 'Playground',
      chat: 'Chat',
      chat_parse_failed: 'Failed to parse the chat data',
      console: 'Console',
      dashboard: 'Dashboard',
      token: 'API tokens',
      log: 'Usage log',
      midjourney: 'Drawing log',
      task: 'Task log',
      admin: 'Administration',
      channel: 'Channels',
      redemption: 'Redemption codes',
      user: 'User management',
      setting: 'System settings',
      personal: 'Personal',
      topup: 'Wallet',
      personal_setting: 'Personal settings',
    },
    footer: {
      credit: '{{name}} {{version}} · powered by Tollgate',
    },
    not_found: {
      title: '404',
      message: 'The page does not exist, please check your browser address',
      home: 'Back to home',
    },
  },

  setup: {
    title: 'System setup',
    sqlite_warning:
      'The database is embedded in the data folder: in a container its data may not persist. Use PostgreSQL for anything that matters.',
    root_initialized: 'The administrator account is already initialised.',
    admin: 'Administrator account',
    username: 'Username',
    password: 'Password',
    confirm_password: 'Confirm password',
    usage_mode: 'Usage mode',
    mode_external: 'External use',
    mode_self: 'Self use',
    mode_demo: 'Demo site',
    mode_help: 'About usage modes',
    mode_help_external: 'External use: usage is charged; every model needs a price, otherwise users cannot use it.',
    mode_help_self: 'Self use: usage accounting is relaxed; models without a price can be used.',
    mode_help_demo: 'Demo site: for showing the features.',
    submit: 'Initialise the system',
    success: 'System initialized successfully, redirecting…',
    failed: 'Initialization failed, please retry',
    network_failed: 'System initialization failed, please retry',
    username_required: 'Please enter the admin username',
    password_too_short: 'Password must be at least 8 characters long',
    password_mismatch: 'The two passwords entered do not match',
  },

  login: {
    title: 'Log in',
    username: 'Username or email',
    password: 'Password',
    submit: 'Log in',
    required: 'Please enter username and password!',
    success: 'Login successful',
    expired: 'Not logged in or login expired, please log in again',
  },

  resources: {},
};
