import AccountBalanceWallet from '@mui/icons-material/AccountBalanceWallet';
import Assignment from '@mui/icons-material/Assignment';
import Brush from '@mui/icons-material/Brush';
import Category from '@mui/icons-material/Category';
import Dashboard from '@mui/icons-material/Dashboard';
import Forum from '@mui/icons-material/Forum';
import Hub from '@mui/icons-material/Hub';
import Payments from '@mui/icons-material/Payments';
import People from '@mui/icons-material/People';
import Person from '@mui/icons-material/Person';
import PlaylistAdd from '@mui/icons-material/PlaylistAdd';
import ReceiptLong from '@mui/icons-material/ReceiptLong';
import Redeem from '@mui/icons-material/Redeem';
import Science from '@mui/icons-material/Science';
import Settings from '@mui/icons-material/Settings';
import VpnKey from '@mui/icons-material/VpnKey';
import type { ReactElement } from 'react';
import { isAdmin, type Permissions } from './providers/session.ts';
import { menuEntryShown, type SidebarEntry } from './status/modules.ts';
import { chatLinks, type SiteStatus } from './status/status.ts';

/** What decides whether a menu entry shows. */
export interface MenuContext {
  status: SiteStatus;
  permissions: Permissions | undefined;
}

export interface MenuItem {
  /** Route of the page (see routes.tsx). */
  to: string;
  /** i18n key of the label (shell.menu.*), or `text` for labels that come from data. */
  label?: string;
  text?: string;
  icon: ReactElement;
  visible?: (context: MenuContext) => boolean;
  /** The entry of the administrator's side-menu settings (SidebarModulesAdmin) that can turn it off. */
  entry?: SidebarEntry;
}

export interface MenuSection {
  key: string;
  /** i18n key of the section title; none for the first, untitled section. */
  label?: string;
  items: (context: MenuContext) => MenuItem[];
  visible?: (context: MenuContext) => boolean;
}

/**
 * The side menu (spec doc 1 §2 "Side menu"): its sections and items, in order, with who sees them.
 * A new page with a menu entry adds it here and its route in routes.tsx.
 */
export const MENU: MenuSection[] = [
  {
    key: 'use',
    items: () => [
      { to: '/playground', label: 'shell.menu.playground', icon: <Science />, entry: ['chat', 'playground'] },
    ],
  },
  {
    key: 'chat',
    label: 'shell.menu.chat',
    // One entry per saved chat client (status `chats`), each opening /chat/{index}.
    items: ({ status }) =>
      (chatLinks(status) ?? []).map((chat, index) => ({
        to: `/chat/${index}`,
        text: chat.name,
        icon: <Forum />,
        entry: ['chat', 'chat'],
      })),
  },
  {
    key: 'console',
    label: 'shell.menu.console',
    items: () => [
      {
        to: '/detail',
        label: 'shell.menu.dashboard',
        icon: <Dashboard />,
        visible: ({ status }) => status.enable_data_export,
        entry: ['console', 'detail'],
      },
      { to: '/token', label: 'shell.menu.token', icon: <VpnKey />, entry: ['console', 'token'] },
      { to: '/log', label: 'shell.menu.log', icon: <ReceiptLong />, entry: ['console', 'log'] },
      {
        to: '/midjourney',
        label: 'shell.menu.midjourney',
        icon: <Brush />,
        visible: ({ status }) => status.enable_drawing,
        entry: ['console', 'midjourney'],
      },
      {
        to: '/task',
        label: 'shell.menu.task',
        icon: <Assignment />,
        visible: ({ status }) => status.enable_task,
        entry: ['console', 'task'],
      },
    ],
  },
  {
    key: 'admin',
    label: 'shell.menu.admin',
    visible: ({ permissions }) => isAdmin(permissions),
    items: () => [
      { to: '/channel', label: 'shell.menu.channel', icon: <Hub />, entry: ['admin', 'channel'] },
      { to: '/models', label: 'shell.menu.models', icon: <Category /> },
      { to: '/redemption', label: 'shell.menu.redemption', icon: <Redeem />, entry: ['admin', 'redemption'] },
      { to: '/user', label: 'shell.menu.user', icon: <People />, entry: ['admin', 'user'] },
      { to: '/topup/orders', label: 'shell.menu.topup_orders', icon: <Payments /> },
      { to: '/prefill_group', label: 'shell.menu.prefill_group', icon: <PlaylistAdd /> },
      { to: '/setting', label: 'shell.menu.setting', icon: <Settings />, entry: ['admin', 'setting'] },
    ],
  },
  {
    key: 'personal',
    label: 'shell.menu.personal',
    items: () => [
      { to: '/topup', label: 'shell.menu.topup', icon: <AccountBalanceWallet />, entry: ['personal', 'topup'] },
      { to: '/personal', label: 'shell.menu.personal_setting', icon: <Person />, entry: ['personal', 'personal'] },
    ],
  },
];

/** The sections and items that show for this user and status. */
export function visibleMenu(context: MenuContext): Array<{ section: MenuSection; items: MenuItem[] }> {
  return MENU.filter((section) => section.visible?.(context) ?? true)
    .map((section) => ({
      section,
      items: section
        .items(context)
        .filter((item) => (item.visible?.(context) ?? true) && menuEntryShown(context, item)),
    }))
    .filter(({ items }) => items.length > 0);
}
