import { type ReactElement, type ReactNode, Suspense } from 'react';
import { AccessDenied, Loading, type ResourceProps } from 'react-admin';
import { Navigate, useLocation } from 'react-router';
import { lazyNamed } from './lazy.ts';
import { EXPIRED_LOGIN_PATH } from './providers/http.ts';
import { ROLE, sessionWasExpired, useSessionUser } from './providers/session.ts';
import { ChannelCreate, ChannelEdit, channelResource } from './resources/channel/index.ts';
import { logResource } from './resources/log/index.ts';
import { midjourneyResource } from './resources/midjourney/index.ts';
import { redemptionResource } from './resources/redemption/index.ts';
import { taskResource } from './resources/task/index.ts';
import { tokenResource } from './resources/token/index.ts';
import { UserEditPage, userResource } from './resources/user/index.ts';

// Every page its own chunk, loaded when first opened.
const AboutPage = lazyNamed(() => import('./pages/account/AboutPage.tsx'), 'AboutPage');
const HomePage = lazyNamed(() => import('./pages/account/HomePage.tsx'), 'HomePage');
const LoginPage = lazyNamed(() => import('./pages/account/LoginPage.tsx'), 'LoginPage');
const OAuthCallbackPage = lazyNamed(() => import('./pages/account/OAuthCallbackPage.tsx'), 'OAuthCallbackPage');
const PersonalPage = lazyNamed(() => import('./pages/account/PersonalPage.tsx'), 'PersonalPage');
const RegisterPage = lazyNamed(() => import('./pages/account/RegisterPage.tsx'), 'RegisterPage');
const ResetConfirmPage = lazyNamed(() => import('./pages/account/ResetPages.tsx'), 'ResetConfirmPage');
const ResetRequestPage = lazyNamed(() => import('./pages/account/ResetPages.tsx'), 'ResetRequestPage');
const SetupPage = lazyNamed(() => import('./pages/account/SetupPage.tsx'), 'SetupPage');
const ModelsPage = lazyNamed(() => import('./pages/models/ModelsPage.tsx'), 'ModelsPage');
const SettingsPage = lazyNamed(() => import('./pages/settings/SettingsPage.tsx'), 'SettingsPage');
const Chat2LinkPage = lazyNamed(() => import('./pages/user/ChatPage.tsx'), 'Chat2LinkPage');
const ChatPage = lazyNamed(() => import('./pages/user/ChatPage.tsx'), 'ChatPage');
const DashboardPage = lazyNamed(() => import('./pages/user/DashboardPage.tsx'), 'DashboardPage');
const PlaygroundPage = lazyNamed(() => import('./pages/user/PlaygroundPage.tsx'), 'PlaygroundPage');
const PricingPage = lazyNamed(() => import('./pages/user/PricingPage.tsx'), 'PricingPage');
const WalletPage = lazyNamed(() => import('./pages/user/WalletPage.tsx'), 'WalletPage');
const TopUpOrdersPage = lazyNamed(() => import('./pages/user/TopUpHistory.tsx'), 'TopUpOrdersPage');
const PrefillGroupsPage = lazyNamed(() => import('./pages/admin/PrefillGroupsPage.tsx'), 'PrefillGroupsPage');

/** Who may open a page (spec doc 1 §2 and §6). */
export type Access = 'public' | 'user' | 'admin' | 'root';

export interface PageRoute {
  /** A react-router path (`:id` parameters, `?` for optional segments). */
  path: string;
  access: Access;
  element: ReactElement;
}

/**
 * Every page of the console (spec doc 1 §2, doc 2 §2, doc 3 §2), one entry each; react-admin resources
 * are in RESOURCES. Menu entries are in menu.tsx; labels and texts in i18n/zh.ts and i18n/en.ts.
 */
export const PAGES: PageRoute[] = [
  { path: '/', access: 'public', element: <HomePage /> },
  { path: '/setup', access: 'public', element: <SetupPage /> },
  { path: '/login', access: 'public', element: <LoginPage /> },
  { path: '/register', access: 'public', element: <RegisterPage /> },
  { path: '/reset', access: 'public', element: <ResetRequestPage /> },
  { path: '/user/reset', access: 'public', element: <ResetConfirmPage /> },
  // Built-in providers (github, oidc, linuxdo, discord) and custom providers' slugs.
  { path: '/oauth/:provider', access: 'public', element: <OAuthCallbackPage /> },
  { path: '/pricing', access: 'public', element: <PricingPage /> },
  { path: '/about', access: 'public', element: <AboutPage /> },

  { path: '/personal', access: 'user', element: <PersonalPage /> },
  { path: '/topup', access: 'user', element: <WalletPage /> },
  // /token, /log, /midjourney and /task are the react-admin resources below.
  { path: '/detail', access: 'user', element: <DashboardPage /> },
  { path: '/playground', access: 'user', element: <PlaygroundPage /> },
  { path: '/chat/:id?', access: 'user', element: <ChatPage /> },
  { path: '/chat2link', access: 'user', element: <Chat2LinkPage /> },

  // /channel, /redemption and /user are the administrators' react-admin resources below; the drawers
  // of the spec's paths are pages over the same views.
  { path: '/channel/add', access: 'admin', element: <ChannelCreate /> },
  { path: '/channel/edit/:id', access: 'admin', element: <ChannelEdit /> },
  { path: '/user/edit', access: 'admin', element: <UserEditPage /> },
  { path: '/user/edit/:id', access: 'admin', element: <UserEditPage /> },
  { path: '/models', access: 'admin', element: <ModelsPage /> },
  { path: '/setting', access: 'admin', element: <SettingsPage /> },
  { path: '/topup/orders', access: 'admin', element: <TopUpOrdersPage /> },
  { path: '/prefill_group', access: 'admin', element: <PrefillGroupsPage /> },
];

/**
 * react-admin resources (`/rest/<name>` lists, edits, creations), e.g. `{ name: 'token', list: TokenList }`
 * from resources/token/index.ts. Administrators-only names are in providers/authProvider.ts.
 * A path listed in PAGES wins over a resource route of the same path.
 */
export const RESOURCES: ResourceProps[] = [
  tokenResource,
  logResource,
  midjourneyResource,
  taskResource,
  channelResource,
  redemptionResource,
  userResource,
];

/** Redirects a visitor to /login, shows access denied to a user below the page's role. */
export function Guard({ access, children }: { access: Access; children: ReactNode }) {
  const user = useSessionUser();
  const location = useLocation();
  // Every page is its own chunk (lazyNamed): show the loading indicator while it arrives.
  const page = <Suspense fallback={<Loading />}>{children}</Suspense>;
  if (access === 'public') return page;
  if (!user) {
    // After a 401 the shell is already on its way to /login?expired=true: go to the same place.
    const to = sessionWasExpired() ? EXPIRED_LOGIN_PATH : '/login';
    return <Navigate to={to} replace state={{ nextPathname: location.pathname, nextSearch: location.search }} />;
  }
  const minimum = access === 'root' ? ROLE.root : access === 'admin' ? ROLE.admin : ROLE.user;
  return user.role >= minimum ? page : <AccessDenied />;
}
