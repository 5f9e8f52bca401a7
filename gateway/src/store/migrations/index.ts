import type { SchemaMigration } from '../schema.ts';
import * as initial from './0001_initial.ts';
import * as instanceSecrets from './0002_instance_secrets.ts';
import * as channelObservations from './0003_channel_observations.ts';
import * as taskBilling from './0004_task_billing.ts';
import * as midjourneyKeyIndex from './0005_midjourney_key_index.ts';
import * as logsWithoutTokenIdIndex from './0006_logs_without_token_id_index.ts';
import * as modelPriceBillingExpr from './0007_model_price_billing_expr.ts';
import * as periodicQuotas from './0008_periodic_quotas.ts';
import * as rateLimits from './0009_rate_limits.ts';
import * as prefillGroups from './0010_prefill_groups.ts';
import * as checkins from './0011_checkins.ts';
import * as modelCatalogue from './0012_model_catalogue.ts';
import * as twoFactor from './0013_two_factor.ts';
import * as passkeys from './0014_passkeys.ts';
import * as customOAuth from './0015_custom_oauth.ts';

/**
 * Every migration, in the order it must run. Names are never changed once released. Each declares its
 * compatibility (see schema.ts): `expand` ones let a rolled-back gateway keep serving the migrated database.
 */
export const migrations: Record<string, SchemaMigration> = {
  '0001_initial': initial,
  '0002_instance_secrets': instanceSecrets,
  '0003_channel_observations': channelObservations,
  '0004_task_billing': taskBilling,
  '0005_midjourney_key_index': midjourneyKeyIndex,
  '0006_logs_without_token_id_index': logsWithoutTokenIdIndex,
  '0007_model_price_billing_expr': modelPriceBillingExpr,
  '0008_periodic_quotas': periodicQuotas,
  '0009_rate_limits': rateLimits,
  '0010_prefill_groups': prefillGroups,
  '0011_checkins': checkins,
  '0012_model_catalogue': modelCatalogue,
  '0013_two_factor': twoFactor,
  '0014_passkeys': passkeys,
  '0015_custom_oauth': customOAuth,
};
