import DeleteSweep from '@mui/icons-material/DeleteSweep';
import Send from '@mui/icons-material/Send';
import StopCircle from '@mui/icons-material/StopCircle';
import Tune from '@mui/icons-material/Tune';
import {
  Autocomplete,
  Box,
  Button,
  Card,
  CardContent,
  IconButton,
  MenuItem,
  Paper,
  Slider,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import { type KeyboardEvent, useEffect, useRef, useState } from 'react';
import { Title, useNotify, useTranslate } from 'react-admin';
import { useSearchParams } from 'react-router';
import { useIsMobile } from '../../layout/visibility.ts';
import { api, gatewayHeaders, sessionExpired } from '../../providers/http.ts';
import { useSessionUser } from '../../providers/session.ts';
import { errorText, SseParser } from './stream.ts';

/** Playground defaults (spec doc 3 §3, §9). */
export const PLAYGROUND_DEFAULTS = { model: 'gpt-4o-mini', temperature: 0.7, max_tokens: 0 };
export const TEMPERATURE = { min: 0.1, max: 1, step: 0.1 };

/** Chat message status (spec doc 3 §4): loading, then incomplete while streaming, then complete or error. */
export type MessageStatus = 'loading' | 'incomplete' | 'complete' | 'error';

export interface ChatMessage {
  id: number;
  role: 'user' | 'assistant';
  content: string;
  status: MessageStatus;
}

interface GroupInfo {
  desc: string;
  ratio: number;
}

let nextId = 1;

/** The playground (spec doc 3 §2): settings panel, chat with a streamed answer, clear context. */
export function PlaygroundPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const user = useSessionUser();
  const mobile = useIsMobile();
  const [params] = useSearchParams();
  const [groups, setGroups] = useState<Record<string, GroupInfo>>({});
  const [models, setModels] = useState<string[]>([]);
  const [group, setGroup] = useState('');
  const [model, setModel] = useState(PLAYGROUND_DEFAULTS.model);
  const [temperature, setTemperature] = useState(PLAYGROUND_DEFAULTS.temperature);
  const [maxTokens, setMaxTokens] = useState(String(PLAYGROUND_DEFAULTS.max_tokens));
  const [system, setSystem] = useState(() => translate('playground.default_system'));
  const [messages, setMessages] = useState<ChatMessage[]>(() => [
    { id: nextId++, role: 'user', content: translate('playground.greeting_user'), status: 'complete' },
    { id: nextId++, role: 'assistant', content: translate('playground.greeting_assistant'), status: 'complete' },
  ]);
  const [draft, setDraft] = useState('');
  const [panelOpen, setPanelOpen] = useState(false);
  const abort = useRef<AbortController | undefined>(undefined);
  const bottom = useRef<HTMLDivElement>(null);
  const busy = messages.some((m) => m.status === 'loading' || m.status === 'incomplete');

  useEffect(() => {
    if (params.get('expired') === 'true') notify('playground.expired', { type: 'warning' });
  }, [params, notify]);

  useEffect(() => {
    let live = true;
    api
      .get<Record<string, GroupInfo>>('/api/user/self/groups')
      .then((data) => {
        if (!live) return;
        setGroups(data ?? {});
        setGroup(
          (current) => current || (user?.group && data?.[user.group] ? user.group : (Object.keys(data ?? {})[0] ?? '')),
        );
      })
      .catch(() => {});
    api
      .get<string[]>('/api/user/models')
      .then((data) => {
        if (!live) return;
        setModels(data ?? []);
        setModel((current) => (data?.length && !data.includes(current) ? data[0]! : current));
      })
      .catch(() => {});
    return () => {
      live = false;
    };
  }, [user?.group]);

  useEffect(() => () => abort.current?.abort(), []);

  // Keep the newest message in view as the answer grows.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on every change of the messages
  useEffect(() => {
    bottom.current?.scrollIntoView?.({ block: 'end' });
  }, [messages]);

  const patch = (id: number, change: (message: ChatMessage) => Partial<ChatMessage>) =>
    setMessages((list) => list.map((m) => (m.id === id ? { ...m, ...change(m) } : m)));

  const send = async () => {
    const text = draft.trim();
    if (!text || busy) return;
    const question: ChatMessage = { id: nextId++, role: 'user', content: text, status: 'complete' };
    const answer: ChatMessage = { id: nextId++, role: 'assistant', content: '', status: 'loading' };
    const history = [...messages.filter((m) => m.status !== 'error'), question];
    setMessages([...messages, question, answer]);
    setDraft('');
    const body: Record<string, unknown> = {
      messages: [
        ...(system.trim() ? [{ role: 'system', content: system }] : []),
        ...history.map((m) => ({ role: m.role, content: m.content })),
      ],
      stream: true,
      model,
      group,
      temperature,
    };
    const max = Number(maxTokens);
    if (Number.isFinite(max) && max > 0) body.max_tokens = Math.floor(max);
    const controller = new AbortController();
    abort.current = controller;
    const fail = (message: string) =>
      patch(answer.id, (m) => ({ content: m.content ? `${m.content}\n\n${message}` : message, status: 'error' }));
    try {
      const headers = gatewayHeaders({ 'Content-Type': 'application/json', Accept: 'text/event-stream' });
      const response = await fetch('/pg/chat/completions', {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        credentials: 'include',
        signal: controller.signal,
      });
      if (response.status === 401) {
        sessionExpired();
        return;
      }
      if (!response.ok || !response.body) {
        fail(errorText(await response.text(), response.status));
        return;
      }
      let failed = false;
      const parser = new SseParser({
        onDelta: (piece) => patch(answer.id, (m) => ({ content: m.content + piece, status: 'incomplete' })),
        onError: (message) => {
          failed = true;
          fail(message);
        },
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      while (!parser.done && !failed) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.push(value);
      }
      parser.end();
      if (!parser.done) void reader.cancel().catch(() => {});
      // The stream ends on [DONE], on an error, or when the connection closes (spec doc 3 §4).
      if (!failed) patch(answer.id, () => ({ status: 'complete' }));
    } catch (error) {
      if ((error as Error).name === 'AbortError') patch(answer.id, () => ({ status: 'complete' }));
      else fail((error as Error).message);
    } finally {
      if (abort.current === controller) abort.current = undefined;
    }
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void send();
    }
  };

  const clear = () => {
    abort.current?.abort();
    setMessages([]);
  };

  const panel = (
    <Card sx={{ width: { xs: '100%', md: 300 }, flex: 'none' }} data-testid="playground-panel">
      <CardContent sx={{ display: 'flex', flexDirection: 'column', gap: 2 }}>
        <TextField
          select
          size="small"
          label={translate('playground.group')}
          value={group in groups ? group : ''}
          onChange={(event) => setGroup(event.target.value)}
          slotProps={{ select: { SelectDisplayProps: { 'data-testid': 'playground-group' } as object } }}
        >
          {Object.entries(groups).map(([name, info]) => (
            <MenuItem key={name} value={name}>
              {name} · {info.desc} · ×{info.ratio}
            </MenuItem>
          ))}
        </TextField>
        <Autocomplete
          size="small"
          options={models}
          value={model}
          onChange={(_event, value) => value && setModel(value)}
          disableClearable
          renderInput={(props) => (
            <TextField
              {...props}
              label={translate('playground.model')}
              slotProps={{
                ...props.slotProps,
                htmlInput: { ...props.slotProps.htmlInput, 'data-testid': 'playground-model' },
              }}
            />
          )}
        />
        <Box>
          <Typography variant="body2" gutterBottom>
            {translate('playground.temperature', { value: temperature.toFixed(1) })}
          </Typography>
          <Slider
            value={temperature}
            min={TEMPERATURE.min}
            max={TEMPERATURE.max}
            step={TEMPERATURE.step}
            marks
            valueLabelDisplay="auto"
            onChange={(_event, value) => setTemperature(value as number)}
          />
        </Box>
        <TextField
          size="small"
          type="number"
          label={translate('playground.max_tokens')}
          helperText={translate('playground.max_tokens_help')}
          value={maxTokens}
          onChange={(event) => setMaxTokens(event.target.value)}
          slotProps={{ htmlInput: { min: 0, step: 1 } }}
        />
        <TextField
          size="small"
          label={translate('playground.system')}
          multiline
          minRows={3}
          value={system}
          onChange={(event) => setSystem(event.target.value)}
        />
      </CardContent>
    </Card>
  );

  return (
    <Box data-testid="playground-page" sx={{ display: 'flex', flexDirection: 'column', flex: 1, minHeight: 0 }}>
      <Title title={translate('playground.title')} />
      {mobile && (
        <Button
          startIcon={<Tune />}
          onClick={() => setPanelOpen(!panelOpen)}
          sx={{ alignSelf: 'flex-start', mb: 1 }}
          data-testid="playground-panel-toggle"
        >
          {translate(panelOpen ? 'playground.hide_settings' : 'playground.show_settings')}
        </Button>
      )}
      <Box sx={{ display: 'flex', gap: 2, flex: 1, minHeight: 0, flexDirection: { xs: 'column', md: 'row' } }}>
        {(!mobile || panelOpen) && panel}
        <Paper sx={{ flex: 1, display: 'flex', flexDirection: 'column', minHeight: 420 }} variant="outlined">
          <Box sx={{ display: 'flex', alignItems: 'center', px: 2, py: 1, borderBottom: 1, borderColor: 'divider' }}>
            <Typography sx={{ flex: 1 }} variant="subtitle1">
              {model}
            </Typography>
            <Tooltip title={translate('playground.clear')}>
              <IconButton onClick={clear} data-testid="playground-clear" aria-label={translate('playground.clear')}>
                <DeleteSweep />
              </IconButton>
            </Tooltip>
          </Box>
          <Box sx={{ flex: 1, overflowY: 'auto', p: 2, display: 'flex', flexDirection: 'column', gap: 1.5 }}>
            {messages.length === 0 && (
              <Typography color="text.secondary" sx={{ textAlign: 'center', mt: 4 }}>
                {translate('playground.empty')}
              </Typography>
            )}
            {messages.map((message) => (
              <Box
                key={message.id}
                data-testid="playground-message"
                data-role={message.role}
                data-status={message.status}
                sx={{
                  alignSelf: message.role === 'user' ? 'flex-end' : 'flex-start',
                  maxWidth: '80%',
                  px: 1.5,
                  py: 1,
                  borderRadius: 2,
                  whiteSpace: 'pre-wrap',
                  wordBreak: 'break-word',
                  bgcolor: message.role === 'user' ? 'primary.main' : 'action.hover',
                  color:
                    message.role === 'user'
                      ? 'primary.contrastText'
                      : message.status === 'error'
                        ? 'error.main'
                        : 'text.primary',
                }}
              >
                {message.status === 'loading' ? translate('playground.thinking') : message.content}
              </Box>
            ))}
            <div ref={bottom} />
          </Box>
          <Box sx={{ display: 'flex', gap: 1, p: 1, borderTop: 1, borderColor: 'divider', alignItems: 'flex-end' }}>
            <TextField
              fullWidth
              multiline
              maxRows={6}
              size="small"
              placeholder={translate('playground.input')}
              value={draft}
              onChange={(event) => setDraft(event.target.value)}
              onKeyDown={onKeyDown}
              slotProps={{ htmlInput: { 'data-testid': 'playground-input' } }}
            />
            {busy ? (
              <Button
                variant="outlined"
                color="warning"
                startIcon={<StopCircle />}
                onClick={() => abort.current?.abort()}
                sx={{ flex: 'none', whiteSpace: 'nowrap' }}
                data-testid="playground-stop"
              >
                {translate('playground.stop')}
              </Button>
            ) : (
              <Button
                variant="contained"
                startIcon={<Send />}
                onClick={() => void send()}
                disabled={!draft.trim()}
                sx={{ flex: 'none', whiteSpace: 'nowrap' }}
                data-testid="playground-send"
              >
                {translate('playground.send')}
              </Button>
            )}
          </Box>
        </Paper>
      </Box>
    </Box>
  );
}
