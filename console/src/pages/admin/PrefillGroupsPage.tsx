import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  MenuItem,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { Title, useNotify, useTranslate } from 'react-admin';
import { api, errorMessage } from '../../providers/http.ts';
import {
  itemsOf,
  itemsText,
  listPrefillGroups,
  PREFILL_TYPES,
  type PrefillGroup,
  type PrefillType,
} from './prefill-groups.ts';

interface Draft {
  id?: number;
  name: string;
  type: PrefillType;
  items: string;
  description: string;
}

const EMPTY: Draft = { name: '', type: 'model', items: '', description: '' };

/** Prefill groups (/prefill_group): the lists the channel editor can fill a channel's models from. */
export function PrefillGroupsPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const [groups, setGroups] = useState<PrefillGroup[]>();
  const [failure, setFailure] = useState<string>();
  const [draft, setDraft] = useState<Draft>();
  const [deleting, setDeleting] = useState<PrefillGroup>();

  const load = useCallback(async () => {
    try {
      setGroups(await listPrefillGroups());
      setFailure(undefined);
    } catch (error) {
      setFailure(errorMessage(error));
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const save = async () => {
    if (!draft) return;
    const body = { ...draft, items: itemsOf(draft.type, draft.items) };
    try {
      if (draft.id) await api.put('/api/prefill_group', body);
      else await api.post('/api/prefill_group', body);
      notify('prefill.saved', { type: 'success' });
      setDraft(undefined);
      await load();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  };

  const remove = async (group: PrefillGroup) => {
    setDeleting(undefined);
    try {
      await api.delete(`/api/prefill_group/${group.id}`);
      notify('prefill.deleted', { type: 'success' });
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
    await load();
  };

  return (
    <Box data-testid="prefill-groups-page" data-loaded={groups !== undefined}>
      <Title title={translate('prefill.title')} />
      <Card>
        <CardContent>
          <Box sx={{ display: 'flex', alignItems: 'center', mb: 1 }}>
            <Typography variant="body2" color="text.secondary" sx={{ flex: 1 }}>
              {translate('prefill.help')}
            </Typography>
            <Button variant="contained" onClick={() => setDraft(EMPTY)} data-testid="prefill-add">
              {translate('prefill.add')}
            </Button>
          </Box>
          {failure && <Alert severity="error">{translate(failure)}</Alert>}
          <Table size="small">
            <TableHead>
              <TableRow>
                <TableCell>{translate('prefill.name')}</TableCell>
                <TableCell>{translate('prefill.type')}</TableCell>
                <TableCell>{translate('prefill.items')}</TableCell>
                <TableCell>{translate('prefill.description')}</TableCell>
                <TableCell />
              </TableRow>
            </TableHead>
            <TableBody>
              {(groups ?? []).map((group) => (
                <TableRow key={group.id} data-testid={`prefill-row-${group.name}`}>
                  <TableCell>{group.name}</TableCell>
                  <TableCell>{translate(`prefill.types.${group.type}`, { _: group.type })}</TableCell>
                  <TableCell sx={{ maxWidth: 360, overflowWrap: 'anywhere' }}>
                    {Array.isArray(group.items) ? group.items.join(', ') : group.items}
                  </TableCell>
                  <TableCell>{group.description}</TableCell>
                  <TableCell align="right" sx={{ whiteSpace: 'nowrap' }}>
                    <Button
                      size="small"
                      onClick={() =>
                        setDraft({
                          id: group.id,
                          name: group.name,
                          type: group.type,
                          items: itemsText(group),
                          description: group.description,
                        })
                      }
                    >
                      {translate('ra.action.edit')}
                    </Button>
                    <Button size="small" color="error" onClick={() => setDeleting(group)}>
                      {translate('ra.action.delete')}
                    </Button>
                  </TableCell>
                </TableRow>
              ))}
              {groups && groups.length === 0 && (
                <TableRow>
                  <TableCell colSpan={5}>
                    <Typography color="text.secondary">{translate('prefill.empty')}</Typography>
                  </TableCell>
                </TableRow>
              )}
            </TableBody>
          </Table>
        </CardContent>
      </Card>
      <Dialog open={draft !== undefined} onClose={() => setDraft(undefined)} fullWidth maxWidth="sm">
        <DialogTitle>{translate(draft?.id ? 'prefill.edit' : 'prefill.add')}</DialogTitle>
        {draft && (
          <DialogContent>
            <Stack spacing={2} sx={{ pt: 1 }}>
              <TextField
                label={translate('prefill.name')}
                value={draft.name}
                onChange={(event) => setDraft({ ...draft, name: event.target.value })}
                slotProps={{ htmlInput: { 'data-testid': 'prefill-name' } }}
              />
              <TextField
                select
                label={translate('prefill.type')}
                value={draft.type}
                onChange={(event) => setDraft({ ...draft, type: event.target.value as PrefillType })}
              >
                {PREFILL_TYPES.map((type) => (
                  <MenuItem key={type} value={type}>
                    {translate(`prefill.types.${type}`)}
                  </MenuItem>
                ))}
              </TextField>
              <TextField
                multiline
                minRows={4}
                label={translate('prefill.items')}
                helperText={translate(draft.type === 'endpoint' ? 'prefill.items_endpoint' : 'prefill.items_hint')}
                value={draft.items}
                onChange={(event) => setDraft({ ...draft, items: event.target.value })}
                slotProps={{ htmlInput: { 'data-testid': 'prefill-items' } }}
              />
              <TextField
                label={translate('prefill.description')}
                value={draft.description}
                onChange={(event) => setDraft({ ...draft, description: event.target.value })}
              />
            </Stack>
          </DialogContent>
        )}
        <DialogActions>
          <Button onClick={() => setDraft(undefined)}>{translate('ra.action.cancel')}</Button>
          <Button variant="contained" onClick={() => void save()} data-testid="prefill-save">
            {translate('ra.action.save')}
          </Button>
        </DialogActions>
      </Dialog>
      <Dialog open={deleting !== undefined} onClose={() => setDeleting(undefined)}>
        <DialogTitle>{translate('prefill.delete_title')}</DialogTitle>
        <DialogContent>
          <Typography>{translate('prefill.delete_text', { name: deleting?.name ?? '' })}</Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setDeleting(undefined)}>{translate('ra.action.cancel')}</Button>
          <Button color="error" variant="contained" onClick={() => deleting && void remove(deleting)}>
            {translate('ra.action.delete')}
          </Button>
        </DialogActions>
      </Dialog>
    </Box>
  );
}
