import Delete from '@mui/icons-material/Delete';
import {
  Alert,
  Button,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  IconButton,
  List,
  ListItem,
  ListItemText,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';
import { api, errorMessage } from '../../providers/http.ts';
import type { Channel } from './form.ts';

/**
 * An Ollama channel's models, managed on its server: the pulled models (its /api/tags), pulling a
 * model by name, deleting one, and the server's version.
 */
export function OllamaDialog({ channel, onClose }: { channel: Channel; onClose: () => void }) {
  const translate = useTranslate();
  const notify = useNotify();
  const [models, setModels] = useState<string[]>();
  const [version, setVersion] = useState<string>();
  const [name, setName] = useState('');
  const [busy, setBusy] = useState<string>();

  const load = useCallback(() => {
    api
      .get<string[]>(`/api/channel/fetch_models/${channel.id}`)
      .then((list) => setModels(list ?? []))
      .catch((error) => {
        notify(errorMessage(error), { type: 'error' });
        setModels([]);
      });
  }, [channel.id, notify]);

  useEffect(() => {
    load();
    api
      .get<{ version: string }>(`/api/channel/ollama/version/${channel.id}`)
      .then((data) => setVersion(data?.version))
      .catch(() => setVersion(undefined));
  }, [channel.id, load]);

  const run = async (model: string, method: 'POST' | 'DELETE', path: string) => {
    setBusy(model);
    try {
      const answer = await api.request(method, path, { body: { channel_id: channel.id, model_name: model } });
      notify(answer.message, { type: 'success' });
      if (method === 'POST') setName('');
      load();
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="sm" data-testid="ollama-dialog">
      <DialogTitle>{translate('channel.ollama.title', { name: channel.name })}</DialogTitle>
      <DialogContent>
        <Stack spacing={2} sx={{ pt: 1 }}>
          {version && (
            <Typography variant="body2" color="text.secondary" data-testid="ollama-version">
              {translate('channel.ollama.version', { version })}
            </Typography>
          )}
          <Stack direction="row" spacing={1}>
            <TextField
              size="small"
              fullWidth
              label={translate('channel.ollama.model')}
              placeholder="llama3.1:8b"
              value={name}
              onChange={(event) => setName(event.target.value)}
              slotProps={{ htmlInput: { 'data-testid': 'ollama-model' } }}
            />
            <Button
              variant="contained"
              disabled={!name.trim() || busy !== undefined}
              onClick={() => run(name.trim(), 'POST', '/api/channel/ollama/pull')}
              data-testid="ollama-pull"
            >
              {busy === name.trim() ? <CircularProgress size={20} /> : translate('channel.ollama.pull')}
            </Button>
          </Stack>
          {!models ? (
            <CircularProgress />
          ) : models.length === 0 ? (
            <Alert severity="info">{translate('channel.ollama.empty')}</Alert>
          ) : (
            <List dense data-testid="ollama-models">
              {models.map((model) => (
                <ListItem
                  key={model}
                  secondaryAction={
                    <IconButton
                      edge="end"
                      aria-label={translate('channel.ollama.delete')}
                      disabled={busy !== undefined}
                      onClick={() => run(model, 'DELETE', '/api/channel/ollama/delete')}
                    >
                      {busy === model ? <CircularProgress size={18} /> : <Delete fontSize="small" />}
                    </IconButton>
                  }
                >
                  <ListItemText primary={model} />
                </ListItem>
              ))}
            </List>
          )}
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{translate('common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
}
