import CloudSync from '@mui/icons-material/CloudSync';
import { Chip, Tooltip } from '@mui/material';
import { useTranslate } from 'react-admin';
import { formatTime } from '../admin-shared.tsx';
import { CHANNEL_STATUS, RESPONSE_COLOURS, responseColour } from './constants.ts';
import { type Channel, statusReason } from './form.ts';

/** "Managed by" badge of a channel a Kubernetes resource owns (its fields are read-only here). */
export function ManagedBadge({
  channel,
}: {
  channel: Pick<Channel, 'managed_by' | 'managed_namespace' | 'managed_name'>;
}) {
  const translate = useTranslate();
  if (!channel.managed_by) return null;
  const resource = `${channel.managed_namespace ?? ''}/${channel.managed_name ?? ''}`;
  return (
    <Tooltip title={translate('channel.managed.tooltip', { resource, manager: channel.managed_by })}>
      <Chip
        size="small"
        color="secondary"
        variant="outlined"
        icon={<CloudSync />}
        label={translate('channel.managed.badge', { resource })}
        data-testid="managed-badge"
      />
    </Tooltip>
  );
}

/** Channel status (spec doc 2 §4): 1 enabled, 2 disabled, 3 auto-disabled with reason and time. */
export function StatusChip({ channel }: { channel: Pick<Channel, 'status' | 'other_info'> }) {
  const translate = useTranslate();
  switch (channel.status) {
    case CHANNEL_STATUS.enabled:
      return <Chip size="small" color="success" label={translate('channel.status.enabled')} />;
    case CHANNEL_STATUS.disabled:
      return <Chip size="small" color="default" label={translate('channel.status.disabled')} />;
    case CHANNEL_STATUS.autoDisabled: {
      const { reason, time } = statusReason(channel);
      return (
        <Tooltip
          title={translate('channel.status.auto_disabled_reason', {
            reason: reason || '-',
            time: formatTime(time),
          })}
        >
          <Chip size="small" color="warning" label={translate('channel.status.auto_disabled')} />
        </Tooltip>
      );
    }
    default:
      return <Chip size="small" label={translate('channel.status.unknown')} />;
  }
}

/** Response time with its colour (spec doc 2 §9). */
export function ResponseTime({ ms, testTime }: { ms: number; testTime?: number }) {
  const translate = useTranslate();
  const colour = responseColour(ms);
  const label =
    colour === 'untested'
      ? translate('channel.response.untested')
      : translate('channel.response.seconds', { s: (ms / 1000).toFixed(2) });
  return (
    <Tooltip title={testTime ? translate('channel.response.tested_at', { time: formatTime(testTime) }) : ''}>
      <Chip
        size="small"
        label={label}
        data-colour={colour}
        data-testid="response-time"
        sx={{ bgcolor: RESPONSE_COLOURS[colour], color: '#fff', fontWeight: 500 }}
      />
    </Tooltip>
  );
}
