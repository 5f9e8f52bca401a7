import {
  Alert,
  Button,
  Checkbox,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormControlLabel,
  List,
  ListItem,
  ListItemText,
  Typography,
} from '@mui/material';
import { useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { errorMessage } from '../../providers/http.ts';
import { catalogueApi, type Missing, type SyncPreview } from './catalogue.ts';

/** GET /api/models/missing: served models without metadata or price; one without metadata can get an entry here. */
export function MissingDialog(props: { open: boolean; onClose: () => void; onCreate: (name: string) => void }) {
  const translate = useTranslate();
  const [missing, setMissing] = useState<Missing>();
  const [failure, setFailure] = useState<string>();
  useEffect(() => {
    if (!props.open) return;
    setMissing(undefined);
    setFailure(undefined);
    catalogueApi.missing().then(setMissing, (error) => setFailure(errorMessage(error)));
  }, [props.open]);
  return (
    <Dialog open={props.open} onClose={props.onClose} fullWidth maxWidth="sm" data-testid="missing-dialog">
      <DialogTitle>{translate('models.missing_title')}</DialogTitle>
      <DialogContent>
        {failure && <Alert severity="error">{failure}</Alert>}
        {missing?.all.length === 0 && <Typography>{translate('models.missing_none')}</Typography>}
        <List dense>
          {missing?.all.map((name) => (
            <ListItem
              key={name}
              data-testid={`missing-${name}`}
              secondaryAction={
                missing.metadata.has(name) && (
                  <Button size="small" onClick={() => props.onCreate(name)} data-testid={`missing-create-${name}`}>
                    {translate('models.create')}
                  </Button>
                )
              }
            >
              <ListItemText
                primary={name}
                secondary={[
                  missing.metadata.has(name) ? translate('models.lacks_metadata') : '',
                  missing.price.has(name) ? translate('models.lacks_price') : '',
                ]
                  .filter(Boolean)
                  .join(' · ')}
              />
            </ListItem>
          ))}
        </List>
      </DialogContent>
      <DialogActions>
        <Button onClick={props.onClose}>{translate('common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
}

const show = (value: unknown) => (typeof value === 'string' ? value || '—' : JSON.stringify(value));

/**
 * Upstream catalogue sync: loads the preview, lets the administrator tick the entries to create and the
 * differing fields to overwrite (all unticked at first), then applies exactly those.
 */
export function SyncDialog(props: { open: boolean; onClose: (applied: boolean) => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const [preview, setPreview] = useState<SyncPreview>();
  const [failure, setFailure] = useState<string>();
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!props.open) return;
    setPreview(undefined);
    setFailure(undefined);
    setChosen(new Set());
    catalogueApi.preview().then(setPreview, (error) => setFailure(errorMessage(error)));
  }, [props.open]);
  const toggle = (key: string) => {
    const next = new Set(chosen);
    if (!next.delete(key)) next.add(key);
    setChosen(next);
  };
  const apply = async () => {
    if (!preview) return;
    const create = preview.missing.filter((name) => chosen.has(`create\u0000${name}`));
    const overwrite = preview.conflicts
      .map((c) => ({
        model_name: c.model_name,
        fields: c.fields.map((f) => f.field).filter((field) => chosen.has(`${c.model_name}\u0000${field}`)),
      }))
      .filter((o) => o.fields.length > 0);
    setBusy(true);
    try {
      const result = await catalogueApi.apply(create, overwrite);
      notify(translate('models.sync_done', result), { type: 'success' });
      props.onClose(true);
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(false);
    }
  };
  const empty = preview && preview.missing.length === 0 && preview.conflicts.length === 0;
  return (
    <Dialog open={props.open} onClose={() => props.onClose(false)} fullWidth maxWidth="md" data-testid="sync-dialog">
      <DialogTitle>{translate('models.sync_title')}</DialogTitle>
      <DialogContent>
        {failure && (
          <Alert severity="error" data-testid="sync-error">
            {failure}
          </Alert>
        )}
        {preview && <Typography variant="body2">{translate('models.sync_source', preview.source)}</Typography>}
        {empty && <Typography sx={{ mt: 2 }}>{translate('models.sync_nothing')}</Typography>}
        {preview && preview.missing.length > 0 && (
          <>
            <Typography variant="subtitle2" sx={{ mt: 2 }}>
              {translate('models.sync_create')}
            </Typography>
            {preview.missing.map((name) => (
              <FormControlLabel
                key={name}
                sx={{ display: 'block' }}
                control={
                  <Checkbox
                    checked={chosen.has(`create\u0000${name}`)}
                    onChange={() => toggle(`create\u0000${name}`)}
                    slotProps={{ input: { 'data-testid': `sync-create-${name}` } as object }}
                  />
                }
                label={name}
              />
            ))}
          </>
        )}
        {preview && preview.conflicts.length > 0 && (
          <>
            <Typography variant="subtitle2" sx={{ mt: 2 }}>
              {translate('models.sync_update')}
            </Typography>
            {preview.conflicts.map((conflict) =>
              conflict.fields.map((field) => (
                <FormControlLabel
                  key={`${conflict.model_name}/${field.field}`}
                  sx={{ display: 'block' }}
                  control={
                    <Checkbox
                      checked={chosen.has(`${conflict.model_name}\u0000${field.field}`)}
                      onChange={() => toggle(`${conflict.model_name}\u0000${field.field}`)}
                      slotProps={{
                        input: { 'data-testid': `sync-field-${conflict.model_name}-${field.field}` } as object,
                      }}
                    />
                  }
                  label={`${conflict.model_name} · ${translate(`models.sync_fields.${field.field}`)}: ${show(field.local)} → ${show(field.upstream)}`}
                />
              )),
            )}
          </>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={() => props.onClose(false)}>{translate('common.cancel')}</Button>
        <Button
          variant="contained"
          disabled={busy || !preview || chosen.size === 0}
          onClick={() => void apply()}
          data-testid="sync-apply"
        >
          {translate('models.sync_apply')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
