import {
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormControlLabel,
  MenuItem,
  Stack,
  Switch,
  TextField,
} from '@mui/material';
import { useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { errorMessage } from '../../providers/http.ts';
import { catalogueApi, type ModelDraft, NAME_RULES, type Vendor, type VendorDraft } from './catalogue.ts';

/** Creates or edits a model entry; `draft` undefined closes it. */
export function ModelDialog(props: {
  draft: ModelDraft | undefined;
  vendors: Vendor[];
  onClose: (saved: boolean) => void;
}) {
  const translate = useTranslate();
  const notify = useNotify();
  const [draft, setDraft] = useState<ModelDraft>();
  const [busy, setBusy] = useState(false);
  useEffect(() => setDraft(props.draft), [props.draft]);
  if (!draft) return null;
  const set = (changes: Partial<ModelDraft>) => setDraft({ ...draft, ...changes });
  const save = async () => {
    setBusy(true);
    try {
      await catalogueApi.saveModel(draft);
      notify(translate('models.saved'), { type: 'success' });
      props.onClose(true);
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open onClose={() => props.onClose(false)} fullWidth maxWidth="sm" data-testid="model-dialog">
      <DialogTitle>{translate(draft.id ? 'models.edit_model' : 'models.add_model')}</DialogTitle>
      <DialogContent>
        <Stack spacing={2} sx={{ mt: 1 }}>
          <TextField
            label={translate('models.fields.model_name')}
            value={draft.model_name}
            onChange={(e) => set({ model_name: e.target.value })}
            slotProps={{ htmlInput: { 'data-testid': 'model-name' } }}
            required
          />
          <TextField
            select
            label={translate('models.fields.name_rule')}
            value={draft.name_rule}
            onChange={(e) => set({ name_rule: Number(e.target.value) })}
          >
            {NAME_RULES.map((rule, index) => (
              <MenuItem key={rule} value={index}>
                {translate(`models.name_rules.${rule}`)}
              </MenuItem>
            ))}
          </TextField>
          <TextField
            select
            label={translate('models.fields.vendor')}
            value={draft.vendor_id}
            onChange={(e) => set({ vendor_id: Number(e.target.value) })}
            slotProps={{ select: { SelectDisplayProps: { 'data-testid': 'model-vendor' } as object } }}
          >
            <MenuItem value={0}>{translate('models.no_vendor')}</MenuItem>
            {props.vendors.map((vendor) => (
              <MenuItem key={vendor.id} value={vendor.id}>
                {vendor.name}
              </MenuItem>
            ))}
          </TextField>
          <TextField
            label={translate('models.fields.description')}
            value={draft.description}
            onChange={(e) => set({ description: e.target.value })}
            slotProps={{ htmlInput: { 'data-testid': 'model-description' } }}
            multiline
            minRows={2}
          />
          <TextField
            label={translate('models.fields.tags')}
            helperText={translate('models.tags_help')}
            value={draft.tags}
            onChange={(e) => set({ tags: e.target.value })}
            slotProps={{ htmlInput: { 'data-testid': 'model-tags' } }}
          />
          <TextField
            label={translate('models.fields.icon')}
            value={draft.icon}
            onChange={(e) => set({ icon: e.target.value })}
          />
          <TextField
            label={translate('models.fields.endpoints')}
            helperText={translate('models.endpoints_help')}
            value={draft.endpoints}
            onChange={(e) => set({ endpoints: e.target.value })}
          />
          <FormControlLabel
            control={
              <Switch checked={draft.status === 1} onChange={(e) => set({ status: e.target.checked ? 1 : 0 })} />
            }
            label={translate('models.fields.enabled')}
          />
          <FormControlLabel
            control={
              <Switch
                checked={draft.sync_official === 1}
                onChange={(e) => set({ sync_official: e.target.checked ? 1 : 0 })}
              />
            }
            label={translate('models.fields.sync_official')}
          />
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={() => props.onClose(false)}>{translate('common.cancel')}</Button>
        <Button variant="contained" disabled={busy} onClick={() => void save()} data-testid="model-save">
          {translate('models.save')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

/** Creates or edits a vendor; `draft` undefined closes it. */
export function VendorDialog(props: { draft: VendorDraft | undefined; onClose: (saved: boolean) => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const [draft, setDraft] = useState<VendorDraft>();
  const [busy, setBusy] = useState(false);
  useEffect(() => setDraft(props.draft), [props.draft]);
  if (!draft) return null;
  const set = (changes: Partial<VendorDraft>) => setDraft({ ...draft, ...changes });
  const save = async () => {
    setBusy(true);
    try {
      await catalogueApi.saveVendor(draft);
      notify(translate('models.saved'), { type: 'success' });
      props.onClose(true);
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open onClose={() => props.onClose(false)} fullWidth maxWidth="sm" data-testid="vendor-dialog">
      <DialogTitle>{translate(draft.id ? 'models.edit_vendor' : 'models.add_vendor')}</DialogTitle>
      <DialogContent>
        <Stack spacing={2} sx={{ mt: 1 }}>
          <TextField
            label={translate('models.fields.vendor_name')}
            value={draft.name}
            onChange={(e) => set({ name: e.target.value })}
            slotProps={{ htmlInput: { 'data-testid': 'vendor-name' } }}
            required
          />
          <TextField
            label={translate('models.fields.description')}
            value={draft.description}
            onChange={(e) => set({ description: e.target.value })}
          />
          <TextField
            label={translate('models.fields.icon')}
            value={draft.icon}
            onChange={(e) => set({ icon: e.target.value })}
          />
          <FormControlLabel
            control={
              <Switch checked={draft.status === 1} onChange={(e) => set({ status: e.target.checked ? 1 : 0 })} />
            }
            label={translate('models.fields.enabled')}
          />
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={() => props.onClose(false)}>{translate('common.cancel')}</Button>
        <Button variant="contained" disabled={busy} onClick={() => void save()} data-testid="vendor-save">
          {translate('models.save')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
