import { Box, Typography } from '@mui/material';
import type { ReactElement, ReactNode } from 'react';
import { AccessDenied, type ResourceProps, useTranslate } from 'react-admin';
import { Navigate, useLocation } from 'react-router';
import { AboutPage } from './pages/account/AboutPage.tsx';
import { HomePage } from './pages/account/HomePage.tsx';
import { LoginPage } from './pages/account/LoginPage.tsx';
import { OAuthCallbackPage } from './pages/account/OAuthCallbackPage.tsx';
import { PersonalPage } from './pages/account/PersonalPage.tsx';
import { RegisterPage } from './pages/account/RegisterPage.tsx';
import { ResetConfirmPage, ResetRequestPage } from './pages/account/ResetPages.tsx';
import { SetupPage } from './pages/account/SetupPage.tsx';
import { SettingsPage } from './pages/settings/SettingsPage.tsx';
import { Chat2LinkPage, ChatPage } from './pages/user/ChatPage.tsx';
import { DashboardPage } from './pages/user/DashboardPage.tsx';
import { PlaygroundPage } from './pages/user/PlaygroundPage.tsx';
import { PricingPage } from './pages/user/PricingPage.tsx';
import { WalletPage } from './pages/user/WalletPage.tsx';
import { EXPIRED_LOGIN_PATH } from './providers/http.ts';
import { ROLE, sessionWasExpired, useSessionUser } from './providers/session.ts';
import { ChannelCreate, ChannelEdit, channelResource } from './resources/channel/index.ts';
import { logResource } from './resources/log/index.ts';
import { midjourneyResource } from './resources/midjourney/index.ts';
import { redemptionResource } from './resources/redemption/index.ts';
import { taskResource } from './resources/task/index.ts';
import { tokenResource } from './resources/token/index.ts';
import { UserEditPage, userResource } from './resources/user/index.ts';

/** Who may open a page (spec doc 1 §2 and §6). */
export type Access = 'public' | 'user' | 'admin' | 'root';

export interface PageRoute {
  /** A react-router path (`:id` parameters, `?` for optional segments). */
  path: string;
  access: Access;
  element: ReactElement;
}

/**
 * Every page of the console (spec doc 1 §2, doc 2 §2, doc 3 §2), one entry each. Pages that are not built
 * yet point at <NotBuilt> naming the spec section that describes them: replace the element when the page
 * arrives (or move the path to RESOURCES when it becomes a react-admin resource).
 * Menu entries are in menu.tsx; labels and texts in i18n/zh.ts and i18n/en.ts.
 */
export const PAGES: PageRoute[] = [
  { path: '/', access: 'public', element: <HomePage /> },
  { path: '/setup', access: 'public', element: <SetupPage /> },
  { path: '/login', access: 'public', element: <LoginPage /> },
  { path: '/register', access: 'public', element: <RegisterPage /> },
  { path: '/reset', access: 'public', element: <ResetRequestPage /> },
  { path: '/user/reset', access: 'public', element: <ResetConfirmPage /> },
  { path: '/oauth/github', access: 'public', element: <OAuthCallbackPage provider="github" /> },
  { path: '/oauth/oidc', access: 'public', element: <OAuthCallbackPage provider="oidc" /> },
  { path: '/oauth/linuxdo', access: 'public', element: <OAuthCallbackPage provider="linuxdo" /> },
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
  { path: '/setting', access: 'admin', element: <SettingsPage /> },
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
  if (access === 'public') return children;
  if (!user) {
    // After a 401 the shell is already on its way to /login?expired=true: go to the same place.
    const to = sessionWasExpired() ? EXPIRED_LOGIN_PATH : '/login';
    return <Navigate to={to} replace state={{ nextPathname: location.pathname, nextSearch: location.search }} />;
  }
  const minimum = access === 'root' ? ROLE.root : access === 'admin' ? ROLE.admin : ROLE.user;
  return user.role >= minimum ? children : <AccessDenied />;
}

/** Stand-in for a page another issue builds: says which spec section it is, nothing else. */
export function NotBuilt({ section }: { section: string }) {
  const translate = useTranslate();
  return (
    <Box data-testid="not-built" sx={{ py: 4 }}>
      <Typography color="text.secondary">{translate('common.not_built', { section })}</Typography>
    </Box>
  );
}
