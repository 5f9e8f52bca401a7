import { type Theme, useMediaQuery } from '@mui/material';
import { useLocation } from 'react-router';
import { useSessionUser } from '../providers/session.ts';

/** Mobile, as the shell sees it: narrower than MUI's `sm` breakpoint (600 px). */
export function useIsMobile(): boolean {
  return useMediaQuery<Theme>((theme) => theme.breakpoints.down('sm'), { noSsr: true });
}

/** Routes without the side menu (spec doc 1 §2): home, chat and setup. */
export function isBareRoute(pathname: string): boolean {
  return pathname === '/' || pathname === '/setup' || pathname === '/chat' || pathname.startsWith('/chat/');
}

/** The side menu shows for a signed-in user, on desktop, outside the bare routes. */
export function useSideMenuVisible(): boolean {
  const { pathname } = useLocation();
  const user = useSessionUser();
  const mobile = useIsMobile();
  return user !== undefined && !mobile && !isBareRoute(pathname);
}
