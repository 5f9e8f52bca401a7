import { Box, Divider, ListSubheader } from '@mui/material';
import { useEffect } from 'react';
import {
  Menu,
  MenuItemLink,
  type MenuProps,
  Sidebar,
  type SidebarProps,
  useNotify,
  useSidebarState,
  useTranslate,
} from 'react-admin';
import { visibleMenu } from '../menu.tsx';
import { permissionsOf, useSessionUser } from '../providers/session.ts';
import { useStatus } from '../status/StatusContext.tsx';
import { chatLinks } from '../status/status.ts';
import { useSideMenuVisible } from './visibility.ts';

/** react-admin's sidebar, rendered only where the side menu belongs (see useSideMenuVisible). */
export function ShellSidebar(props: SidebarProps) {
  const visible = useSideMenuVisible();
  return visible ? <Sidebar {...props} /> : null;
}

/** The side menu of spec doc 1 §2: sections and items from menu.tsx, filtered by role and status flags. */
export function SideMenu(props: MenuProps) {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const user = useSessionUser();
  const [open] = useSidebarState();
  const sections = visibleMenu({ status, permissions: permissionsOf(user?.role) });

  const chatsInvalid = chatLinks(status) === undefined;
  useEffect(() => {
    if (chatsInvalid) notify('shell.menu.chat_parse_failed', { type: 'error' });
  }, [chatsInvalid, notify]);

  return (
    <Menu {...props} data-testid="side-menu">
      {sections.map(({ section, items }, index) => (
        <Box
          component="nav"
          key={section.key}
          data-section={section.key}
          aria-label={section.label ? translate(section.label) : undefined}
        >
          {index > 0 && <Divider sx={{ my: 0.5 }} />}
          {section.label && open && (
            <ListSubheader disableSticky sx={{ lineHeight: '32px', bgcolor: 'transparent' }}>
              {translate(section.label)}
            </ListSubheader>
          )}
          {items.map((item) => (
            <MenuItemLink
              key={item.to}
              to={item.to}
              primaryText={item.text ?? translate(item.label ?? '')}
              leftIcon={item.icon}
            />
          ))}
        </Box>
      ))}
    </Menu>
  );
}
