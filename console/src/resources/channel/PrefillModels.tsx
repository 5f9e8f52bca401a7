import { MenuItem, TextField } from '@mui/material';
import { useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { listPrefillGroups, type PrefillGroup } from '../../pages/admin/prefill-groups.ts';

/**
 * Adds the models of a prefill group (type model, /prefill_group) to the channel's; shown only when such
 * groups exist.
 */
export function PrefillModels({ disabled, onFill }: { disabled: boolean; onFill(models: string[]): void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const [groups, setGroups] = useState<PrefillGroup[]>([]);
  useEffect(() => {
    listPrefillGroups('model')
      .then((list) => setGroups(list ?? []))
      .catch(() => setGroups([]));
  }, []);
  if (groups.length === 0) return null;
  return (
    <TextField
      select
      size="small"
      label={translate('prefill.fill_from')}
      value=""
      disabled={disabled}
      sx={{ minWidth: 200 }}
      onChange={(event) => {
        const group = groups.find((g) => String(g.id) === event.target.value);
        const models = Array.isArray(group?.items) ? group.items : [];
        onFill(models);
        notify('prefill.filled', { type: 'info', messageArgs: { count: models.length } });
      }}
      slotProps={{ htmlInput: { 'data-testid': 'channel-prefill-group' } }}
    >
      {groups.map((group) => (
        <MenuItem key={group.id} value={String(group.id)}>
          {group.name}
        </MenuItem>
      ))}
    </TextField>
  );
}
