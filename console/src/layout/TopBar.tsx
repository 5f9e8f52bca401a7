import Celebration from '@mui/icons-material/Celebration';
import DarkMode from '@mui/icons-material/DarkMode';
import LightMode from '@mui/icons-material/LightMode';
import Logout from '@mui/icons-material/Logout';
import MenuIcon from '@mui/icons-material/Menu';
import TranslateIcon from '@mui/icons-material/Translate';
import {
  AppBar,
  Avatar,
  Box,
  Button,
  Chip,
  IconButton,
  ListItemIcon,
  Menu,
  MenuItem,
  Toolbar,
  Tooltip,
  Typography,
} from '@mui/material';
import { type MouseEvent, useState } from 'react';
import {
  LoadingIndicator,
  SidebarToggleButton,
  useLocaleState,
  useLogout,
  useNotify,
  useTheme,
  useTranslate,
} from 'react-admin';
import { Link as RouterLink, useLocation } from 'react-router';
import { LANGUAGES } from '../i18n/index.ts';
import { useSessionUser } from '../providers/session.ts';
import { headerNavOf } from '../status/modules.ts';
import { useStatus } from '../status/StatusContext.tsx';
import { useIsMobile, useSideMenuVisible } from './visibility.ts';

/** The top bar of spec doc 1 §2. */
export function TopBar() {
  const { status } = useStatus();
  const mobile = useIsMobile();
  const sideMenu = useSideMenuVisible();
  return (
    <AppBar position="fixed" color="default" elevation={1} data-testid="top-bar">
      <Toolbar variant={mobile ? 'regular' : 'dense'} sx={{ gap: 1, px: 1 }}>
        {sideMenu && <SidebarToggleButton />}
        <Box
          component={RouterLink}
          to="/"
          sx={{ display: 'flex', alignItems: 'center', gap: 1, color: 'inherit', textDecoration: 'none', mr: 1 }}
        >
          <Box
            component="img"
            src={status.logo || '/logo.svg'}
            alt=""
            sx={{ width: 28, height: 28, borderRadius: 1 }}
          />
          {!mobile && (
            <Typography variant="subtitle1" noWrap sx={{ fontWeight: 600 }}>
              {status.system_name}
            </Typography>
          )}
        </Box>
        <NavLinks />
        <Box sx={{ flex: 1 }} />
        <ModeBadge />
        <NewYearButton />
        <LoadingIndicator />
        <ThemeSwitch />
        <LanguageMenu />
        <AccountArea />
      </Toolbar>
    </AppBar>
  );
}

interface NavLink {
  key: string;
  label: string;
  to: string;
  external?: boolean;
}

/**
 * Home, Console, Pricing, Docs (only when a docs link is set; external), About: each unless the administrator
 * turned it off (HeaderNavModules). Pricing that needs a sign-in leads visitors to /login.
 */
function NavLinks() {
  const translate = useTranslate();
  const { status } = useStatus();
  const user = useSessionUser();
  const modules = headerNavOf(status);
  const { pathname } = useLocation();
  const mobile = useIsMobile();
  const inConsole = useSideMenuVisible();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const active = (link: NavLink) => (link.key === 'console' ? inConsole : !link.external && link.to === pathname);
  const pricingTo = modules.pricing.requireAuth && !user ? '/login' : '/pricing';
  const links: NavLink[] = [
    ...(modules.home ? [{ key: 'home', label: 'shell.nav.home', to: '/' }] : []),
    ...(modules.console
      ? [{ key: 'console', label: 'shell.nav.console', to: status.enable_data_export ? '/detail' : '/token' }]
      : []),
    ...(modules.pricing.enabled ? [{ key: 'pricing', label: 'shell.nav.pricing', to: pricingTo }] : []),
    ...(status.docs_link && modules.docs
      ? [{ key: 'docs', label: 'shell.nav.docs', to: status.docs_link, external: true }]
      : []),
    ...(modules.about ? [{ key: 'about', label: 'shell.nav.about', to: '/about' }] : []),
  ];
  if (links.length === 0) return null;
  const linkProps = (link: NavLink) =>
    link.external
      ? { component: 'a' as const, href: link.to, target: '_blank', rel: 'noreferrer' }
      : { component: RouterLink, to: link.to };

  if (mobile) {
    return (
      <>
        <IconButton aria-label={translate('ra.action.open_menu')} onClick={(event) => setAnchor(event.currentTarget)}>
          <MenuIcon />
        </IconButton>
        <Menu anchorEl={anchor} open={anchor !== null} onClose={() => setAnchor(null)}>
          {links.map((link) => (
            <MenuItem key={link.key} {...linkProps(link)} onClick={() => setAnchor(null)} data-nav={link.key}>
              {translate(link.label)}
            </MenuItem>
          ))}
        </Menu>
      </>
    );
  }
  return (
    <Box component="nav" sx={{ display: 'flex', gap: 0.5 }}>
      {links.map((link) => (
        <Button
          key={link.key}
          {...linkProps(link)}
          color={active(link) ? 'primary' : 'inherit'}
          size="small"
          data-nav={link.key}
        >
          {translate(link.label)}
        </Button>
      ))}
    </Box>
  );
}

/** The self-use or demo badge. */
function ModeBadge() {
  const translate = useTranslate();
  const { status } = useStatus();
  const label = status.self_use_mode_enabled
    ? 'shell.badge.self_use'
    : status.demo_site_enabled
      ? 'shell.badge.demo'
      : undefined;
  return label ? (
    <Chip size="small" color="warning" variant="outlined" label={translate(label)} data-testid="mode-badge" />
  ) : null;
}

/** On New Year's Day, a small celebration button (spec doc 1 §2). */
function NewYearButton() {
  const translate = useTranslate();
  const notify = useNotify();
  const today = new Date();
  if (today.getMonth() !== 0 || today.getDate() !== 1) return null;
  return (
    <Tooltip title={translate('shell.new_year')}>
      <IconButton
        onClick={() => notify('shell.new_year', { type: 'success' })}
        aria-label={translate('shell.new_year')}
      >
        <Celebration />
      </IconButton>
    </Tooltip>
  );
}

/** Dark/light switch; remembered in local storage `theme-mode` (see providers/store.ts). */
function ThemeSwitch() {
  const translate = useTranslate();
  const [theme, setTheme] = useTheme();
  const dark = theme === 'dark';
  const label = translate(dark ? 'shell.theme.to_light' : 'shell.theme.to_dark');
  return (
    <Tooltip title={label}>
      <IconButton onClick={() => setTheme(dark ? 'light' : 'dark')} aria-label={label} data-testid="theme-switch">
        {dark ? <LightMode /> : <DarkMode />}
      </IconButton>
    </Tooltip>
  );
}

/** The language menu (中文, English); remembered in local storage `i18nextLng`. */
function LanguageMenu() {
  const translate = useTranslate();
  const [locale, setLocale] = useLocaleState();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  return (
    <>
      <Tooltip title={translate('shell.language')}>
        <IconButton
          aria-label={translate('shell.language')}
          data-testid="language-menu"
          onClick={(event) => setAnchor(event.currentTarget)}
        >
          <TranslateIcon />
        </IconButton>
      </Tooltip>
      <Menu anchorEl={anchor} open={anchor !== null} onClose={() => setAnchor(null)}>
        {LANGUAGES.map((language) => (
          <MenuItem
            key={language.locale}
            selected={language.locale === locale}
            data-locale={language.locale}
            onClick={() => {
              setAnchor(null);
              setLocale(language.locale);
            }}
          >
            {language.name}
          </MenuItem>
        ))}
      </Menu>
    </>
  );
}

/** Signed in: the avatar with the username and a Logout item. Signed out: Login and Register. */
function AccountArea() {
  const translate = useTranslate();
  const user = useSessionUser();
  const { status } = useStatus();
  const mobile = useIsMobile();
  const logout = useLogout();
  const notify = useNotify();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);

  if (!user) {
    return (
      <Box sx={{ display: 'flex', gap: 0.5 }}>
        <Button component={RouterLink} to="/login" size="small" variant="contained" data-testid="login-link">
          {translate('shell.account.login')}
        </Button>
        {!mobile && !status.self_use_mode_enabled && (
          <Button component={RouterLink} to="/register" size="small" data-testid="register-link">
            {translate('shell.account.register')}
          </Button>
        )}
      </Box>
    );
  }
  const name = user.display_name || user.username;
  const onLogout = async () => {
    setAnchor(null);
    await logout({}, '/login', false);
    notify('shell.account.logout_success', { type: 'success' });
  };
  return (
    <>
      <Button
        color="inherit"
        onClick={(event: MouseEvent<HTMLElement>) => setAnchor(event.currentTarget)}
        aria-label={translate('shell.account.menu')}
        data-testid="account-menu"
        sx={{ textTransform: 'none', gap: 1 }}
      >
        <Avatar sx={{ width: 28, height: 28, fontSize: 14, bgcolor: 'primary.main' }}>
          {name.slice(0, 1).toUpperCase()}
        </Avatar>
        {!mobile && <span>{user.username}</span>}
      </Button>
      <Menu anchorEl={anchor} open={anchor !== null} onClose={() => setAnchor(null)}>
        <MenuItem onClick={onLogout} data-testid="logout">
          <ListItemIcon>
            <Logout fontSize="small" />
          </ListItemIcon>
          {translate('shell.account.logout')}
        </MenuItem>
      </Menu>
    </>
  );
}
