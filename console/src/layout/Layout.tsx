import { Box } from '@mui/material';
import { useEffect, useRef } from 'react';
import { type LayoutProps, Layout as RaLayout, TitlePortal, useNotify } from 'react-admin';
import { useNavigate } from 'react-router';
import { api, EXPIRED_LOGIN_PATH, setUnauthorizedHandler } from '../providers/http.ts';
import { getStoredUser, type SessionUser, storeUser } from '../providers/session.ts';
import { useStatus } from '../status/StatusContext.tsx';
import { Footer } from './Footer.tsx';
import { ModuleGate } from './ModuleGate.tsx';
import { ShellSidebar, SideMenu } from './SideMenu.tsx';
import { StepUpDialog } from './StepUpDialog.tsx';
import { TopBar } from './TopBar.tsx';

/** The shell around every page: top bar, side menu (where it belongs), page title, content, footer. */
export function ShellLayout({ children }: LayoutProps) {
  return (
    <RaLayout appBar={TopBar} appBarAlwaysOn menu={SideMenu} sidebar={ShellSidebar}>
      <SessionWatch />
      <StatusEffects />
      <StepUpDialog />
      <Box sx={{ flex: 1, display: 'flex', flexDirection: 'column', p: { xs: 1, sm: 2 } }}>
        <TitlePortal variant="h6" sx={{ flex: 'none', mb: 1 }} />
        <ModuleGate>{children}</ModuleGate>
      </Box>
      <Footer />
    </RaLayout>
  );
}

/**
 * A 401 from any /api call sends the browser to /login?expired=true through the router (spec doc 1 §4).
 * At start, a stored user is checked against GET /api/user/self, which also refreshes name and role.
 */
function SessionWatch() {
  const navigate = useNavigate();
  const navigateRef = useRef(navigate);
  useEffect(() => {
    navigateRef.current = navigate;
  }, [navigate]);
  useEffect(() => {
    setUnauthorizedHandler(() => {
      if (window.location.pathname !== '/login') navigateRef.current(EXPIRED_LOGIN_PATH);
    });
    if (getStoredUser()) {
      api
        .get<SessionUser>('/api/user/self')
        .then(storeUser)
        .catch(() => {});
    }
  }, []);
  return null;
}

/** Title and icon from the status; a notice when the status could not be loaded (spec doc 1 §8). */
function StatusEffects() {
  const { status, failure } = useStatus();
  const notify = useNotify();
  useEffect(() => {
    document.title = status.system_name || 'Tollgate';
    const icon = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
    if (icon) icon.href = status.logo || '/logo.svg';
  }, [status.system_name, status.logo]);
  useEffect(() => {
    if (failure) notify(failure, { type: 'error' });
  }, [failure, notify]);
  return null;
}
