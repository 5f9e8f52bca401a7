import { Alert, Box } from '@mui/material';
import type { ReactNode } from 'react';
import { useTranslate } from 'react-admin';
import { Navigate, useLocation } from 'react-router';
import { ROLE, useSessionUser } from '../providers/session.ts';
import { pageAccess } from '../status/modules.ts';
import { useStatus } from '../status/StatusContext.tsx';

/**
 * Keeps users out of the pages whose menu entry the administrator turned off (SidebarModulesAdmin, and
 * Pricing in HeaderNavModules), and sends visitors to sign in when Pricing asks for it. The gateway's own
 * permissions are unchanged: this is what the console offers, not who may call the API.
 */
export function ModuleGate({ children }: { children: ReactNode }) {
  const translate = useTranslate();
  const { status } = useStatus();
  const user = useSessionUser();
  const location = useLocation();
  const access = pageAccess(status, location.pathname, {
    signedIn: user !== undefined,
    admin: (user?.role ?? 0) >= ROLE.admin,
  });
  if (access === 'sign-in') {
    return <Navigate to="/login" replace state={{ nextPathname: location.pathname, nextSearch: location.search }} />;
  }
  if (access === 'off') {
    return (
      <Box sx={{ p: 2 }}>
        <Alert severity="info" data-testid="module-off">
          {translate('modules.page_off')}
        </Alert>
      </Box>
    );
  }
  return children;
}
