import {
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import { type ReactNode, useCallback, useEffect, useState } from 'react';
import {
  AccessDenied,
  Pagination,
  SearchInput,
  type SearchInputProps,
  useListContext,
  useNotify,
  useTranslate,
} from 'react-admin';
import { Navigate, useLocation } from 'react-router';
import { ROLE, useSessionUser } from '../providers/session.ts';

/**
 * The administrators' pages that are react-admin resource lists but do not go through a list
 * controller (the channels page): a visitor goes to /login, a user below the role sees access denied.
 */
export function AdminOnly({ children, role = ROLE.admin }: { children: ReactNode; role?: number }) {
  const user = useSessionUser();
  const location = useLocation();
  if (!user) return <Navigate to="/login" replace state={{ nextPathname: location.pathname }} />;
  return user.role >= role ? children : <AccessDenied />;
}

/**
 * The root of an administrators' page: a one-column grid whose track may shrink to nothing, so a wide
 * table scrolls inside its container instead of widening the whole layout.
 */
export const PAGE_SX = { display: 'grid', gridTemplateColumns: 'minmax(0, 1fr)', width: '100%' } as const;

/** Unix seconds as local date and time; 0 or less as "-". */
export function formatTime(seconds: number | null | undefined): string {
  if (!seconds || seconds <= 0) return '-';
  const date = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

/**
 * Copying to the clipboard (spec doc 2 §8): success says "copied"; when the browser refuses, a dialog
 * shows the text to copy by hand ("无法复制到剪贴板，请手动复制").
 */
export function useCopy(): { copy: (text: string) => Promise<void>; dialog: ReactNode } {
  const notify = useNotify();
  const translate = useTranslate();
  const [manual, setManual] = useState<string>();
  const copy = useCallback(
    async (text: string) => {
      try {
        await navigator.clipboard.writeText(text);
        notify('settings.shared.copied', { type: 'success' });
      } catch {
        setManual(text);
      }
    },
    [notify],
  );
  const dialog = (
    <Dialog open={manual !== undefined} onClose={() => setManual(undefined)} fullWidth maxWidth="sm">
      <DialogTitle>{translate('settings.shared.copy_failed')}</DialogTitle>
      <DialogContent>
        <TextField
          value={manual ?? ''}
          multiline
          fullWidth
          minRows={3}
          slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'manual-copy' } }}
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={() => setManual(undefined)}>{translate('common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
  return { copy, dialog };
}

/** A yes/no question before an action (every destructive row action asks first). */
export interface ConfirmRequest {
  title: string;
  content: string;
  /** Interpolation for title and content. */
  values?: Record<string, unknown>;
  danger?: boolean;
  onConfirm: () => unknown;
  onCancel?: () => void;
}

export function useConfirm(): { ask: (request: ConfirmRequest) => void; dialog: ReactNode } {
  const translate = useTranslate();
  const [request, setRequest] = useState<ConfirmRequest>();
  const [busy, setBusy] = useState(false);
  const close = (cancelled: boolean) => {
    if (cancelled) request?.onCancel?.();
    setRequest(undefined);
  };
  const dialog = (
    <Dialog open={request !== undefined} onClose={() => close(true)} data-testid="confirm-dialog">
      <DialogTitle>{request ? translate(request.title, request.values) : ''}</DialogTitle>
      <DialogContent>
        <Typography>{request ? translate(request.content, request.values) : ''}</Typography>
      </DialogContent>
      <DialogActions>
        <Button onClick={() => close(true)} data-testid="confirm-cancel">
          {translate('common.cancel')}
        </Button>
        <Button
          variant="contained"
          color={request?.danger ? 'error' : 'primary'}
          disabled={busy}
          data-testid="confirm-ok"
          onClick={async () => {
            const current = request;
            setBusy(true);
            try {
              await current?.onConfirm();
            } finally {
              setBusy(false);
              setRequest(undefined);
            }
          }}
        >
          {translate('common.confirm')}
        </Button>
      </DialogActions>
    </Dialog>
  );
  return { ask: setRequest, dialog };
}

/** Text that shows its full value on hover when cut short. */
export function Ellipsis({ text, width = 160 }: { text: string; width?: number }) {
  return (
    <Tooltip title={text} disableHoverListener={text.length < 20}>
      <Typography variant="body2" noWrap sx={{ maxWidth: width }}>
        {text}
      </Typography>
    </Tooltip>
  );
}

/** Local storage helpers for remembered table settings (spec doc 2 §9). */
export function readLocal<T>(key: string, fallback: T): T {
  try {
    const raw = localStorage.getItem(key);
    if (raw === null) return fallback;
    return JSON.parse(raw) as T;
  } catch {
    return fallback;
  }
}

export function writeLocal(key: string, value: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Private mode or full storage: the setting just is not remembered.
  }
}

/** Page size options and the key that remembers the chosen size (spec doc 1 §9, doc 2 §9). */
export const PAGE_SIZE_OPTIONS = [10, 20, 50, 100];
export const PAGE_SIZE_KEY = 'page-size';
export const rememberedPageSize = (): number => {
  const size = readLocal<number>(PAGE_SIZE_KEY, 10);
  return PAGE_SIZE_OPTIONS.includes(size) ? size : 10;
};

/** react-admin pagination with the spec's sizes that remembers the chosen size in `page-size`. */
export function RememberedPagination() {
  const { perPage } = useListContext();
  useEffect(() => {
    if (perPage) writeLocal(PAGE_SIZE_KEY, perPage);
  }, [perPage]);
  return <Pagination rowsPerPageOptions={PAGE_SIZE_OPTIONS} />;
}

/** react-admin's search filter with a translated placeholder (an i18n key). */
export function SearchFilter({ placeholder, ...props }: SearchInputProps & { placeholder: string }) {
  const translate = useTranslate();
  return <SearchInput {...props} placeholder={translate(placeholder)} />;
}
