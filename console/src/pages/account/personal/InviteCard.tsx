import {
  Box,
  Button,
  Card,
  CardContent,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { formatQuota } from '../../../format/quota.ts';
import { api, errorMessage } from '../../../providers/http.ts';
import { useStatus } from '../../../status/StatusContext.tsx';
import { siteAddress } from '../parts/oauth.tsx';
import type { SelfUser } from './self.ts';

/**
 * Invitations (spec doc 1 §2): the invite link (GET /api/user/aff), the number invited and the earnings,
 * and a dialog that moves earnings into the wallet (POST /api/user/aff_transfer, at least one unit).
 */
export function InviteCard(props: { user: SelfUser; reload(): Promise<void>; copy(text: string): Promise<boolean> }) {
  const { user, reload, copy } = props;
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const [affCode, setAffCode] = useState(user.aff_code);
  const [open, setOpen] = useState(false);

  useEffect(() => {
    api
      .get<string>('/api/user/aff')
      .then((code) => setAffCode(code))
      .catch((error) => notify(errorMessage(error), { type: 'error' }));
  }, [notify]);

  const link = affCode ? `${siteAddress(status)}/register?aff=${encodeURIComponent(affCode)}` : '';
  const stats = [
    { key: 'count', label: 'personal.invite.count', value: String(user.aff_count) },
    { key: 'pending', label: 'personal.invite.pending', value: formatQuota(user.aff_quota, status) },
    { key: 'total', label: 'personal.invite.total', value: formatQuota(user.aff_history_quota, status) },
  ];

  return (
    <Card data-testid="personal-invite">
      <CardContent>
        <Typography variant="subtitle1" sx={{ fontWeight: 600 }} gutterBottom>
          {translate('personal.invite.title')}
        </Typography>
        <Stack direction="row" spacing={4} sx={{ mb: 2 }}>
          {stats.map((stat) => (
            <Box key={stat.key} data-testid={`invite-${stat.key}`}>
              <Typography variant="body2" color="text.secondary">
                {translate(stat.label)}
              </Typography>
              <Typography variant="h6">{stat.value}</Typography>
            </Box>
          ))}
        </Stack>
        <Stack direction="row" spacing={1} sx={{ alignItems: 'center' }}>
          <TextField
            size="small"
            label={translate('personal.invite.link')}
            value={link}
            fullWidth
            slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'invite-link' } }}
          />
          <Button variant="outlined" onClick={() => void copy(link)} disabled={!link} sx={{ whiteSpace: 'nowrap' }}>
            {translate('personal.copy.button')}
          </Button>
          <Button
            variant="contained"
            onClick={() => setOpen(true)}
            disabled={user.aff_quota <= 0}
            sx={{ whiteSpace: 'nowrap' }}
            data-testid="invite-transfer"
          >
            {translate('personal.invite.transfer')}
          </Button>
        </Stack>
      </CardContent>
      {open && (
        <TransferDialog
          available={user.aff_quota}
          onClose={() => setOpen(false)}
          onDone={async () => {
            setOpen(false);
            await reload();
          }}
        />
      )}
    </Card>
  );
}

/** The transfer dialog: an amount of quota, at least one unit (QuotaPerUnit), at most the earnings. */
function TransferDialog(props: { available: number; onClose(): void; onDone(): Promise<void> }) {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const [amount, setAmount] = useState(String(props.available));
  const [problem, setProblem] = useState<string>();
  const [busy, setBusy] = useState(false);
  const minimum = status.quota_per_unit;

  const submit = async () => {
    const quota = Number(amount);
    if (!Number.isInteger(quota) || quota < minimum) {
      setProblem(translate('personal.invite.transfer_min', { amount: formatQuota(minimum, status) }));
      return;
    }
    setProblem(undefined);
    setBusy(true);
    try {
      const { message } = await api.request('POST', '/api/user/aff_transfer', { body: { quota } });
      notify(message || 'personal.invite.transferred', { type: 'success' });
      await props.onDone();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog open onClose={props.onClose} data-testid="transfer-dialog" maxWidth="xs" fullWidth>
      <DialogTitle>{translate('personal.invite.transfer_title')}</DialogTitle>
      <DialogContent>
        <Typography variant="body2" sx={{ mb: 2 }}>
          {translate('personal.invite.available', { amount: formatQuota(props.available, status) })}
        </Typography>
        <TextField
          type="number"
          label={translate('personal.invite.amount')}
          value={amount}
          onChange={(event) => setAmount(event.target.value)}
          error={problem !== undefined}
          helperText={
            problem ?? translate('personal.invite.amount_hint', { amount: formatQuota(Number(amount) || 0, status) })
          }
          fullWidth
          slotProps={{ htmlInput: { min: minimum, step: 1, 'data-testid': 'transfer-amount' } }}
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={props.onClose}>{translate('common.cancel')}</Button>
        <Button variant="contained" onClick={submit} disabled={busy} data-testid="transfer-submit">
          {translate('personal.invite.transfer')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
