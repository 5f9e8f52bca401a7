import type { Services } from '../../services.ts';
import type { RestResource } from '../resource.ts';
import { userResource } from './user.ts';

/** The console's resources by route name (DESIGN.md §2). */
export function restResources(services: Services): Record<string, RestResource> {
  return {
    user: userResource(services.userAdmin, services.keyring),
  };
}
