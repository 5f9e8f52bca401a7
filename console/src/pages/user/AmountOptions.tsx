import { Chip, Stack } from '@mui/material';
import { useEffect, useState } from 'react';
import { api } from '../../providers/http.ts';

/** The amounts the administrator offers as buttons (option payment_setting.amount_options, GET /api/user/topup/info). */
export function AmountOptions({ selected, onPick }: { selected: number; onPick(amount: number): void }) {
  const [amounts, setAmounts] = useState<number[]>([]);
  useEffect(() => {
    api
      .get<{ amount_options?: unknown }>('/api/user/topup/info')
      .then((info) =>
        setAmounts(Array.isArray(info.amount_options) ? info.amount_options.filter(Number.isInteger) : []),
      )
      .catch(() => setAmounts([]));
  }, []);
  if (amounts.length === 0) return null;
  return (
    <Stack direction="row" spacing={1} sx={{ my: 1, flexWrap: 'wrap' }} useFlexGap data-testid="topup-amount-options">
      {amounts.map((amount) => (
        <Chip
          key={amount}
          label={amount}
          color={amount === selected ? 'primary' : 'default'}
          onClick={() => onPick(amount)}
        />
      ))}
    </Stack>
  );
}
