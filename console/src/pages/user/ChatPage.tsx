import { Alert, Box, CircularProgress, Typography } from '@mui/material';
import { useEffect, useRef, useState } from 'react';
import { useLocaleState, useNotify, useTranslate } from 'react-admin';
import { useNavigate, useParams } from 'react-router';
import { errorMessage } from '../../providers/http.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { chatLinks } from '../../status/status.ts';
import { chatLinkUrl, chatUrl } from './chatLink.ts';
import { enabledTokens, revealKey, serverAddress } from './chatTokens.ts';

/** Delay before going to /token when there is no enabled token (spec doc 3 §9). */
export const NO_TOKEN_REDIRECT_MS = 1500;

/**
 * The first enabled key, or undefined after telling the user there is none and sending them to /token
 * (spec doc 3 §4, §5).
 */
function useFirstKey(): { key: string | undefined; failed: boolean } {
  const notify = useNotify();
  const navigate = useNavigate();
  const [key, setKey] = useState<string | undefined>();
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    enabledTokens()
      .then(async (tokens) => {
        if (!live) return;
        if (tokens.length > 0) {
          const full = await revealKey(tokens[0]!.id);
          if (live) setKey(full);
          return;
        }
        setFailed(true);
        notify('chat.no_token', { type: 'error' });
        timer = setTimeout(() => navigate('/token'), NO_TOKEN_REDIRECT_MS);
      })
      .catch((error) => {
        if (!live) return;
        setFailed(true);
        notify(errorMessage(error), { type: 'error' });
      });
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [notify, navigate]);
  return { key, failed };
}

/**
 * /chat/{id}: the saved chat client number `id` in a full-size frame, with the user's first enabled key
 * and the server address put into its link template (spec doc 3 §2 "Chat frame page").
 */
export function ChatPage() {
  const translate = useTranslate();
  const { id } = useParams();
  const { status } = useStatus();
  const { key, failed } = useFirstKey();
  const [locale] = useLocaleState();
  const frame = useRef<HTMLIFrameElement>(null);
  const links = chatLinks(status);
  const link = links?.[Number(id ?? 0)];

  // A language change is passed on to the embedded client (spec doc 3 §4).
  useEffect(() => {
    frame.current?.contentWindow?.postMessage({ lang: locale }, '*');
  }, [locale]);

  if (links === undefined) return <Alert severity="error">{translate('shell.menu.chat_parse_failed')}</Alert>;
  if (!link) return <Alert severity="warning">{translate('token.chat_not_configured')}</Alert>;
  if (failed) return <Alert severity="error">{translate('chat.no_token')}</Alert>;
  if (!key) return <Redirecting />;
  return (
    <Box sx={{ flex: 1, display: 'flex', minHeight: 'calc(100vh - 120px)' }} data-testid="chat-page">
      <Box
        component="iframe"
        ref={frame}
        title={link.name}
        src={chatUrl(link.link, key, serverAddress(status))}
        allow="camera;microphone"
        sx={{ flex: 1, border: 0, width: '100%', minHeight: 'calc(100vh - 120px)' }}
        data-testid="chat-frame"
      />
    </Box>
  );
}

/** /chat2link: straight to the configured chat client with the key and server address (spec doc 3 §2). */
export function Chat2LinkPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const { key, failed } = useFirstKey();
  const [target, setTarget] = useState<string | undefined>();
  useEffect(() => {
    if (!key) return;
    const address = serverAddress(status);
    const first = chatLinks(status)?.[0];
    const url = status.chat_link
      ? chatLinkUrl(status.chat_link, key, address)
      : first
        ? chatUrl(first.link, key, address)
        : undefined;
    if (!url) {
      notify('token.chat_not_configured', { type: 'warning' });
      return;
    }
    setTarget(url);
    window.location.href = url;
  }, [key, status, notify]);
  if (failed) return <Alert severity="error">{translate('chat.no_token')}</Alert>;
  return <Redirecting target={target} />;
}

function Redirecting({ target }: { target?: string | undefined }) {
  const translate = useTranslate();
  return (
    <Box
      sx={{ display: 'flex', alignItems: 'center', gap: 2, py: 4 }}
      data-testid="chat-redirecting"
      data-target={target}
    >
      <CircularProgress size={24} />
      <Typography>{translate('chat.redirecting')}</Typography>
    </Box>
  );
}
