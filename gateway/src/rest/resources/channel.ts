import { channelFields } from '../../api/channel.ts';
import type { ChannelCreateInput, ChannelService, ChannelUpdateInput } from '../../domain/channels/index.ts';
import { typed } from '../fields.ts';
import { idsFilter, numberFilter, type RestResource, textFilter } from '../resource.ts';

/** The console's `channel` resource: upstream channels, for administrators (keys are write-only). */
export function channelResource(channels: ChannelService): RestResource {
  return {
    guard: 'admin',
    list(query) {
      const f = query.filters;
      const status = numberFilter(f, 'status') ?? (textFilter(f, 'status') as 'enabled' | 'disabled' | undefined);
      return channels.list({
        ...query,
        filters: {
          keyword: textFilter(f, 'q') ?? textFilter(f, 'keyword'),
          ids: idsFilter(f),
          type: numberFilter(f, 'type'),
          status,
          group: textFilter(f, 'group'),
          model: textFilter(f, 'model'),
          tag: textFilter(f, 'tag'),
          name: textFilter(f, 'name'),
        },
      });
    },
    getOne: (id) => channels.get(id),
    async create(data) {
      const { channels: created } = await channels.create(typed<ChannelCreateInput>(data, channelFields));
      return created[0]!;
    },
    async update(id, data) {
      const { channel } = await channels.update({ ...typed<ChannelUpdateInput>(data, channelFields), id });
      return channel;
    },
    sensitiveDelete: true,
    async delete(id) {
      const before = await channels.get(id);
      await channels.delete(id);
      return before;
    },
  };
}
