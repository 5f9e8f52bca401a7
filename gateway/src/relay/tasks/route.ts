import type { RelayCaller } from '../auth/key-auth.ts';
import type { RelayPluginDeps } from '../index.ts';
import { pinnedChannel } from '../pipeline.ts';
import { inGroup, routeGroups } from '../routing/auto-group.ts';
import { shouldRetryTask } from '../routing/retry.ts';
import { RoutePlan } from '../routing/route-plan.ts';
import type { ChannelSnapshot } from '../types.ts';

/** A platform's refusal of a submission: `upstream` when the upstream refused it or never answered. */
export interface SubmitFailure extends Error {
  readonly status: number;
  readonly upstream: boolean;
}

/** How a platform routes a new submission. */
export interface TaskRoute<T> {
  /** The channels that speak the platform's protocol: no other is given a submission. */
  accepts: (channel: ChannelSnapshot) => boolean;
  /** The refusal when the administrator pinned a channel of another protocol. */
  notAccepted: () => Error;
  /** The refusal when no channel serves the model (in the group named). */
  noChannel: (group: string) => Error;
  /**
   * One attempt on a channel, priced, held and charged in the group of `who` (the group the channel
   * was picked in); it throws the platform's refusal, `upstream` set when another channel may do better.
   */
  attempt: (who: RelayCaller, channel: ChannelSnapshot) => Promise<T>;
}

/**
 * Routes a new task submission as the relay pipeline routes a request (routing/route-plan.ts): the
 * caller's group, or an auto token's AutoGroups that serve the model; a submission the upstream
 * refused goes to another channel where the task retry rules allow it, and with cross_group_retry on
 * to the next group once a group has used its attempts. Each attempt is billed in its own group.
 */
export async function routeSubmission<T>(
  deps: RelayPluginDeps,
  who: RelayCaller,
  model: string,
  route: TaskRoute<T>,
): Promise<T> {
  if (who.pinnedChannelId !== undefined) {
    const pinned = pinnedChannel(deps.routing, who);
    if (!route.accepts(pinned)) throw route.notAccepted();
    await admitSubmission(deps, who, model);
    return route.attempt(who, pinned);
  }
  const groups = routeGroups(deps.routing, who, model);
  // Limited as the relay limits a request: once, in the first group that serves the model.
  await admitSubmission(deps, inGroup(who, groups[0] ?? who.group), model);
  const plan = new RoutePlan({
    routing: deps.routing,
    groups,
    crossGroup: who.crossGroupRetry === true,
    retries: deps.options.getNumber('RetryTimes'),
    model,
    accepts: route.accepts,
  });
  let refusal: unknown;
  for (let pick = plan.next(); pick; pick = plan.next()) {
    try {
      return await route.attempt(inGroup(who, pick.group), pick.channel);
    } catch (error) {
      if (!retriable(error)) throw error;
      refusal = error;
    }
  }
  throw refusal ?? route.noChannel(plan.group);
}

/**
 * A submission is one request for the RPM limits (however many channels it is sent to), refused
 * before anything is held or sent.
 */
export function admitSubmission(deps: RelayPluginDeps, who: RelayCaller, model: string): Promise<void> {
  return deps.rateLimits.admitRequest(who, model);
}

/**
 * The caller of a follow-up to an earlier task (a Midjourney action, a video remix), which goes to the
 * channel of that task: an auto token is billed in the group the task was served in, as long as that
 * group is still one of its auto groups.
 */
export function inTaskGroup(who: RelayCaller, taskGroup: string): RelayCaller {
  return who.autoGroups?.includes(taskGroup) && who.pinnedChannelId === undefined ? inGroup(who, taskGroup) : who;
}

function retriable(error: unknown): boolean {
  const failure = error as Partial<SubmitFailure> | null;
  return (
    error instanceof Error &&
    failure?.upstream === true &&
    typeof failure.status === 'number' &&
    shouldRetryTask(failure.status)
  );
}
