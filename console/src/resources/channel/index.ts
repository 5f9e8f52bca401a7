import Hub from '@mui/icons-material/Hub';
import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../lazy.ts';

const ChannelList = lazyNamed(() => import('./ChannelList.tsx'), 'ChannelList');
const ChannelCreate = lazyNamed(() => import('./ChannelList.tsx'), 'ChannelCreate');
const ChannelEdit = lazyNamed(() => import('./ChannelList.tsx'), 'ChannelEdit');

/**
 * The `channel` resource (spec doc 2 §2 "Channels page"). The list works on /api/channel (tag mode and
 * search are new-api calls); the spec's /channel/add and /channel/edit/:id are pages in routes.tsx that
 * render the same views with the drawer open.
 */
export const channelResource: ResourceProps = {
  name: 'channel',
  list: ChannelList,
  create: ChannelCreate,
  edit: ChannelEdit,
  icon: Hub,
  recordRepresentation: 'name',
};

export { ChannelCreate, ChannelEdit, ChannelList };
