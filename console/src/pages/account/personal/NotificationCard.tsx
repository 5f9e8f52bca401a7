import {
  Box,
  Button,
  Card,
  CardContent,
  FormControl,
  FormControlLabel,
  FormLabel,
  Radio,
  RadioGroup,
  Stack,
  Switch,
  Tab,
  Tabs,
  TextField,
  Typography,
} from '@mui/material';
import { useEffect, useRef, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { formatQuota } from '../../../format/quota.ts';
import { ApiError, api } from '../../../providers/http.ts';
import { useStatus } from '../../../status/StatusContext.tsx';
import {
  INITIAL_WARNING_THRESHOLD,
  NOTIFY_TYPES,
  type NotifyType,
  parseSetting,
  type SelfUser,
  THRESHOLD_PRESETS,
} from './self.ts';

interface Form {
  notify_type: NotifyType;
  threshold: string;
  webhook_url: string;
  /** Typed here; empty keeps the saved secret (the gateway never sends it back). */
  webhook_secret: string;
  notification_email: string;
  bark_url: string;
  gotify_url: string;
  /** Typed here; empty keeps the saved token. */
  gotify_token: string;
  gotify_priority: string;
  accept_unset_model_ratio_model: boolean;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const HTTP = /^https?:\/\/[^\s/]+/i;

/** The problem with the settings (spec doc 1 §5), as the field and the i18n key, or undefined. */
export function settingProblem(form: Form, gotifyTokenSet = false): { field: keyof Form; message: string } | undefined {
  const threshold = Number(form.threshold);
  if (form.threshold.trim() === '' || !Number.isFinite(threshold) || threshold < 0) {
    return { field: 'threshold', message: 'personal.notify.threshold_min' };
  }
  const url = form.webhook_url.trim();
  if (form.notify_type === 'webhook' && !url)
    return { field: 'webhook_url', message: 'personal.notify.webhook_required' };
  if (url && !/^https:\/\/[^\s/]+/i.test(url))
    return { field: 'webhook_url', message: 'personal.notify.webhook_https' };
  const email = form.notification_email.trim();
  if (email && !EMAIL.test(email)) return { field: 'notification_email', message: 'personal.notify.email_invalid' };
  const bark = form.bark_url.trim();
  if (form.notify_type === 'bark' && !bark) return { field: 'bark_url', message: 'personal.notify.bark_required' };
  if (bark && !HTTP.test(bark)) return { field: 'bark_url', message: 'personal.notify.url_http' };
  const gotify = form.gotify_url.trim();
  if (form.notify_type === 'gotify' && !gotify)
    return { field: 'gotify_url', message: 'personal.notify.gotify_url_required' };
  if (gotify && !HTTP.test(gotify)) return { field: 'gotify_url', message: 'personal.notify.url_http' };
  if (form.notify_type === 'gotify' && !form.gotify_token.trim() && !gotifyTokenSet)
    return { field: 'gotify_token', message: 'personal.notify.gotify_token_required' };
  const priority = Number(form.gotify_priority);
  if (form.gotify_priority.trim() === '' || !Number.isInteger(priority) || priority < 0 || priority > 10)
    return { field: 'gotify_priority', message: 'personal.notify.gotify_priority_range' };
  return undefined;
}

/**
 * Notification and pricing settings (spec doc 1 §2, §3 "User setting"): email, webhook, Bark or Gotify notices
 * when the balance falls under a threshold, the webhook's https URL and optional secret (sent as a bearer header),
 * the Bark push URL, the Gotify server, token and priority,
 * the notification address, and whether models without a price may be used. Saved with PUT /api/user/setting.
 */
export function NotificationCard({ user, reload }: { user: SelfUser; reload(): Promise<void> }) {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const [tab, setTab] = useState<'notify' | 'pricing'>('notify');
  const { webhook_secret_set: secretSet, gotify_token_set: tokenSet } = parseSetting(user.setting);
  const [form, setForm] = useState<Form>({
    notify_type: 'email',
    threshold: String(INITIAL_WARNING_THRESHOLD),
    webhook_url: '',
    webhook_secret: '',
    notification_email: '',
    bark_url: '',
    gotify_url: '',
    gotify_token: '',
    gotify_priority: '5',
    accept_unset_model_ratio_model: false,
  });
  const [problem, setProblem] = useState<ReturnType<typeof settingProblem>>();
  const [busy, setBusy] = useState(false);

  // The form starts from the saved setting once; later reloads (after a save) leave what is typed alone.
  const initialized = useRef(false);
  useEffect(() => {
    if (initialized.current) return;
    initialized.current = true;
    const setting = parseSetting(user.setting);
    setForm({
      notify_type: setting.notify_type,
      threshold: String(setting.quota_warning_threshold),
      webhook_url: setting.webhook_url,
      webhook_secret: '',
      notification_email: setting.notification_email,
      bark_url: setting.bark_url,
      gotify_url: setting.gotify_url,
      gotify_token: '',
      gotify_priority: String(setting.gotify_priority),
      accept_unset_model_ratio_model: setting.accept_unset_model_ratio_model,
    });
  }, [user.setting]);

  const set = <K extends keyof Form>(key: K, value: Form[K]) => {
    setForm((current) => ({ ...current, [key]: value }));
    // The message of a field goes as soon as the field is edited.
    setProblem((current) => (current?.field === key ? undefined : current));
  };

  const save = async () => {
    const found = settingProblem(form, tokenSet);
    setProblem(found);
    if (found) {
      setTab('notify');
      return;
    }
    setBusy(true);
    try {
      const { message } = await api.request('PUT', '/api/user/setting', {
        body: {
          notify_type: form.notify_type,
          quota_warning_threshold: Number(form.threshold),
          webhook_url: form.webhook_url.trim(),
          ...(form.webhook_secret ? { webhook_secret: form.webhook_secret } : {}),
          notification_email: form.notification_email.trim(),
          bark_url: form.bark_url.trim(),
          gotify_url: form.gotify_url.trim(),
          ...(form.gotify_token.trim() ? { gotify_token: form.gotify_token.trim() } : {}),
          gotify_priority: Number(form.gotify_priority),
          accept_unset_model_ratio_model: form.accept_unset_model_ratio_model,
        },
      });
      notify(message || 'personal.notify.saved', { type: 'success' });
      set('webhook_secret', '');
      set('gotify_token', '');
      await reload();
    } catch (error) {
      const detail = error instanceof ApiError ? translate(error.message) : '';
      notify('personal.notify.save_failed', { type: 'error', messageArgs: { detail } });
    } finally {
      setBusy(false);
    }
  };

  const error = (field: keyof Form) =>
    problem?.field === field ? { error: true, helperText: translate(problem.message) } : {};

  return (
    <Card data-testid="personal-settings">
      <Tabs value={tab} onChange={(_, value) => setTab(value)} sx={{ px: 2, borderBottom: 1, borderColor: 'divider' }}>
        <Tab value="notify" label={translate('personal.notify.tab')} data-testid="tab-notify" />
        <Tab value="pricing" label={translate('personal.notify.pricing_tab')} data-testid="tab-pricing" />
      </Tabs>
      <CardContent>
        {tab === 'notify' ? (
          <Stack spacing={2} sx={{ maxWidth: 640 }}>
            <FormControl>
              <FormLabel>{translate('personal.notify.type')}</FormLabel>
              <RadioGroup
                row
                value={form.notify_type}
                onChange={(event) => set('notify_type', event.target.value as Form['notify_type'])}
              >
                {NOTIFY_TYPES.map((type) => (
                  <FormControlLabel
                    key={type}
                    value={type}
                    control={<Radio />}
                    label={translate(`personal.notify.type_${type}`)}
                    data-testid={`notify-type-${type}`}
                  />
                ))}
              </RadioGroup>
            </FormControl>
            <Box>
              <TextField
                type="number"
                label={translate('personal.notify.threshold')}
                value={form.threshold}
                onChange={(event) => set('threshold', event.target.value)}
                fullWidth
                {...error('threshold')}
                slotProps={{ htmlInput: { min: 0, step: 1, 'data-testid': 'notify-threshold' } }}
              />
              <Stack direction="row" spacing={1} sx={{ mt: 1, alignItems: 'center', flexWrap: 'wrap' }} useFlexGap>
                <Typography variant="caption" color="text.secondary">
                  {translate('personal.notify.threshold_equals', {
                    amount: formatQuota(Math.max(0, Number(form.threshold) || 0), status),
                  })}
                </Typography>
                {THRESHOLD_PRESETS.map((preset) => (
                  <Button key={preset} size="small" onClick={() => set('threshold', String(preset))}>
                    {`${preset} (${formatQuota(preset, status)})`}
                  </Button>
                ))}
              </Stack>
            </Box>
            {form.notify_type === 'bark' && (
              <TextField
                label={translate('personal.notify.bark_url')}
                placeholder="https://api.day.app/<key>/{{title}}/{{content}}"
                helperText={translate('personal.notify.bark_hint')}
                value={form.bark_url}
                onChange={(event) => set('bark_url', event.target.value)}
                fullWidth
                {...error('bark_url')}
                slotProps={{ htmlInput: { 'data-testid': 'notify-bark-url' } }}
              />
            )}
            {form.notify_type === 'gotify' && (
              <>
                <TextField
                  label={translate('personal.notify.gotify_url')}
                  placeholder="https://gotify.example.com"
                  helperText={translate('personal.notify.gotify_hint')}
                  value={form.gotify_url}
                  onChange={(event) => set('gotify_url', event.target.value)}
                  fullWidth
                  {...error('gotify_url')}
                  slotProps={{ htmlInput: { 'data-testid': 'notify-gotify-url' } }}
                />
                <TextField
                  type="password"
                  label={translate('personal.notify.gotify_token')}
                  value={form.gotify_token}
                  onChange={(event) => set('gotify_token', event.target.value)}
                  autoComplete="off"
                  fullWidth
                  {...(problem?.field === 'gotify_token'
                    ? error('gotify_token')
                    : {
                        helperText: translate(
                          tokenSet ? 'personal.notify.gotify_token_kept' : 'personal.notify.gotify_token_hint',
                        ),
                      })}
                  slotProps={{ htmlInput: { 'data-testid': 'notify-gotify-token' } }}
                />
                <TextField
                  type="number"
                  label={translate('personal.notify.gotify_priority')}
                  value={form.gotify_priority}
                  onChange={(event) => set('gotify_priority', event.target.value)}
                  fullWidth
                  {...error('gotify_priority')}
                  slotProps={{ htmlInput: { min: 0, max: 10, step: 1, 'data-testid': 'notify-gotify-priority' } }}
                />
              </>
            )}
            {form.notify_type === 'email' ? (
              <TextField
                type="email"
                label={translate('personal.notify.email')}
                helperText={translate('personal.notify.email_hint')}
                value={form.notification_email}
                onChange={(event) => set('notification_email', event.target.value)}
                fullWidth
                {...error('notification_email')}
                slotProps={{ htmlInput: { 'data-testid': 'notify-email' } }}
              />
            ) : form.notify_type === 'webhook' ? (
              <>
                <TextField
                  label={translate('personal.notify.webhook_url')}
                  placeholder="https://"
                  helperText={translate('personal.notify.webhook_hint')}
                  value={form.webhook_url}
                  onChange={(event) => set('webhook_url', event.target.value)}
                  fullWidth
                  {...error('webhook_url')}
                  slotProps={{ htmlInput: { 'data-testid': 'notify-webhook-url' } }}
                />
                <TextField
                  type="password"
                  label={translate('personal.notify.webhook_secret')}
                  helperText={translate(
                    secretSet ? 'personal.notify.webhook_secret_kept' : 'personal.notify.webhook_secret_hint',
                  )}
                  value={form.webhook_secret}
                  onChange={(event) => set('webhook_secret', event.target.value)}
                  autoComplete="off"
                  fullWidth
                  slotProps={{ htmlInput: { 'data-testid': 'notify-webhook-secret' } }}
                />
              </>
            ) : null}
          </Stack>
        ) : (
          <Stack spacing={1} sx={{ maxWidth: 640 }}>
            <FormControlLabel
              control={
                <Switch
                  checked={form.accept_unset_model_ratio_model}
                  onChange={(event) => set('accept_unset_model_ratio_model', event.target.checked)}
                  slotProps={{ input: { 'data-testid': 'accept-unpriced' } as object }}
                />
              }
              label={translate('personal.notify.accept_unpriced')}
            />
            <Typography variant="body2" color="text.secondary">
              {translate('personal.notify.accept_unpriced_hint')}
            </Typography>
          </Stack>
        )}
        <Button variant="contained" sx={{ mt: 3 }} onClick={save} disabled={busy} data-testid="notify-save">
          {translate('personal.notify.save')}
        </Button>
      </CardContent>
    </Card>
  );
}
