import { Alert, Avatar, Box, Button, Card, CardContent, Chip, Skeleton, Stack, Typography } from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslate } from 'react-admin';
import { formatCompact } from '../../format/number.ts';
import { formatQuota } from '../../format/quota.ts';
import { api, errorMessage } from '../../providers/http.ts';
import { PeriodUsageSummary } from '../../resources/periods/PeriodLimits.tsx';
import { useStatus } from '../../status/StatusContext.tsx';
import { useCopy } from './parts/copy.tsx';
import { BindingsCard } from './personal/BindingsCard.tsx';
import { InviteCard } from './personal/InviteCard.tsx';
import { NotificationCard } from './personal/NotificationCard.tsx';
import { PasskeyCard } from './personal/PasskeyCard.tsx';
import { SecurityCard } from './personal/SecurityCard.tsx';
import { SessionsCard } from './personal/SessionsCard.tsx';
import { roleLabel, type SelfUser, useSelf } from './personal/self.ts';
import { TwoFactorCard } from './personal/TwoFactorCard.tsx';

/** Model chips shown before "show all" (spec doc 1 §9). */
export const MODELS_SHOWN = 10;

/**
 * Personal settings (spec doc 1 §2 "Personal settings screen"): balance and statistics, available models,
 * invitations and the transfer of earnings, account bindings, the system access token, password change and
 * account deletion, the sign-in sessions, and the notification and pricing settings.
 */
export function PersonalPage() {
  const { user, error, reload } = useSelf();
  const { copy, dialog } = useCopy();
  if (!user) {
    return (
      <Box data-testid="personal-page">
        {error ? <Alert severity="error">{errorMessage(error)}</Alert> : <Skeleton variant="rounded" height={160} />}
      </Box>
    );
  }
  return (
    <Box data-testid="personal-page" data-loaded="true" sx={{ display: 'flex', flexDirection: 'column', gap: 2 }}>
      <ProfileCard user={user} />
      <PeriodQuotaCard user={user} />
      <Box
        sx={{
          display: 'grid',
          gridTemplateColumns: { xs: 'minmax(0, 1fr)', lg: 'repeat(2, minmax(0, 1fr))' },
          gap: 2,
          alignItems: 'start',
        }}
      >
        <Stack spacing={2}>
          <ModelsCard copy={copy} />
          <InviteCard user={user} reload={reload} copy={copy} />
        </Stack>
        <Stack spacing={2}>
          <BindingsCard user={user} reload={reload} />
          <SecurityCard user={user} reload={reload} copy={copy} />
          <SessionsCard />
          <TwoFactorCard />
          <PasskeyCard />
        </Stack>
      </Box>
      <NotificationCard user={user} reload={reload} />
      {dialog}
    </Box>
  );
}

function ProfileCard({ user }: { user: SelfUser }) {
  const translate = useTranslate();
  const { status } = useStatus();
  const name = user.display_name || user.username;
  const stats = [
    { key: 'balance', label: 'personal.balance', value: formatQuota(user.quota, status) },
    { key: 'used', label: 'personal.used', value: formatQuota(user.used_quota, status) },
    { key: 'requests', label: 'personal.requests', value: formatCompact(user.request_count) },
  ];
  return (
    <Card data-testid="personal-profile">
      <CardContent>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={3} sx={{ alignItems: { sm: 'center' } }}>
          <Stack direction="row" spacing={2} sx={{ alignItems: 'center', flex: 1, minWidth: 0 }}>
            <Avatar sx={{ width: 56, height: 56, bgcolor: 'primary.main' }}>{name.slice(0, 1).toUpperCase()}</Avatar>
            <Box sx={{ minWidth: 0 }}>
              <Typography variant="h6" noWrap>
                {name}
              </Typography>
              <Stack direction="row" spacing={1} sx={{ mt: 0.5, flexWrap: 'wrap' }}>
                <Chip
                  size="small"
                  label={translate(roleLabel(user.role))}
                  color={user.role >= 10 ? 'primary' : 'default'}
                />
                <Chip size="small" variant="outlined" label={translate('personal.group', { group: user.group })} />
                <Chip size="small" variant="outlined" label={`ID ${user.id}`} />
              </Stack>
            </Box>
          </Stack>
          <Stack direction="row" spacing={4}>
            {stats.map((stat) => (
              <Box key={stat.key} data-testid={`personal-${stat.key}`}>
                <Typography variant="body2" color="text.secondary">
                  {translate(stat.label)}
                </Typography>
                <Typography variant="h6">{stat.value}</Typography>
              </Box>
            ))}
          </Stack>
        </Stack>
      </CardContent>
    </Card>
  );
}

/** The account's daily, weekly and monthly limits with a limit: use, what is left, when each resets. */
function PeriodQuotaCard({ user }: { user: SelfUser }) {
  const translate = useTranslate();
  if (!user.period_usage || Object.keys(user.period_usage).length === 0) return null;
  return (
    <Card data-testid="personal-periods">
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600 }} gutterBottom>
          {translate('periods.title')}
        </Typography>
        <PeriodUsageSummary usage={user.period_usage} />
      </CardContent>
    </Card>
  );
}

/** GET /api/user/models as chips: the first 10, then all on demand; a click copies the name. */
function ModelsCard({ copy }: { copy(text: string): Promise<boolean> }) {
  const translate = useTranslate();
  const [models, setModels] = useState<string[]>();
  const [failed, setFailed] = useState<string>();
  const [expanded, setExpanded] = useState(false);
  useEffect(() => {
    api
      .get<string[]>('/api/user/models')
      .then((list) => setModels(Array.isArray(list) ? list : []))
      .catch((error) => setFailed(errorMessage(error)));
  }, []);
  const shown = models ? (expanded ? models : models.slice(0, MODELS_SHOWN)) : [];
  return (
    <Card data-testid="personal-models">
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600 }} gutterBottom>
          {translate('personal.models_title')}
        </Typography>
        {failed && <Alert severity="error">{translate(failed)}</Alert>}
        {models && models.length === 0 && (
          <Typography color="text.secondary">{translate('personal.models_none')}</Typography>
        )}
        <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 1 }}>
          {shown.map((model) => (
            <Chip key={model} label={model} size="small" onClick={() => void copy(model)} data-testid="model-chip" />
          ))}
        </Box>
        {models && models.length > MODELS_SHOWN && (
          <Button size="small" sx={{ mt: 1 }} onClick={() => setExpanded(!expanded)} data-testid="models-toggle">
            {expanded
              ? translate('personal.models_collapse')
              : translate('personal.models_expand', { count: models.length - MODELS_SHOWN })}
          </Button>
        )}
      </CardContent>
    </Card>
  );
}
