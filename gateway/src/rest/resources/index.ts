import type { Services } from '../../services.ts';
import type { RestResource } from '../resource.ts';
import { channelResource } from './channel.ts';
import { logResource, midjourneyResource, taskResource } from './observation.ts';
import { redemptionResource } from './redemption.ts';
import { tokenResource } from './token.ts';
import { userResource } from './user.ts';

/** The console's resources by route name (DESIGN.md §2). */
export function restResources(services: Services): Record<string, RestResource> {
  return {
    channel: channelResource(services.channels),
    token: tokenResource(services.tokens),
    redemption: redemptionResource(services.redemptions),
    user: userResource(services.userAdmin, services.keyring),
    log: logResource(services.logs),
    midjourney: midjourneyResource(services.tasks),
    task: taskResource(services.tasks),
  };
}
