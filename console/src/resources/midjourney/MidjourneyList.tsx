import {
  Alert,
  Box,
  Button,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  LinearProgress,
  Link,
  Typography,
} from '@mui/material';
import { useState } from 'react';
import { Datagrid, FunctionField, List, useTranslate } from 'react-admin';
import { formatQuota } from '../../format/quota.ts';
import { formatMillis } from '../../format/time.ts';
import { useClipboard } from '../../pages/user/clipboard.tsx';
import { ROLE, useSessionUser } from '../../providers/session.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { PageBar } from '../log/LogList.tsx';
import { liveQueryOptions } from './live.ts';
import { type FilterField, TaskFilterBar } from './TaskFilterBar.tsx';

/** A drawing task (spec doc 3 §3). */
interface DrawingTask {
  id: number;
  submit_time: number;
  finish_time: number;
  channel_id: number;
  action: string;
  mj_id: string;
  code: number;
  status: string;
  progress: string;
  image_url: string;
  prompt: string;
  prompt_en: string;
  fail_reason: string;
  quota: number;
  username?: string;
}

/** Drawing actions (spec doc 3 §4); anything else is unknown. */
const ACTIONS: Record<string, string> = {
  IMAGINE: 'midjourney.action.imagine',
  UPSCALE: 'midjourney.action.upscale',
  VARIATION: 'midjourney.action.variation',
  HIGH_VARIATION: 'midjourney.action.high_variation',
  LOW_VARIATION: 'midjourney.action.low_variation',
  PAN: 'midjourney.action.pan',
  DESCRIBE: 'midjourney.action.describe',
  BLEND: 'midjourney.action.blend',
  UPLOAD: 'midjourney.action.upload',
  SHORTEN: 'midjourney.action.shorten',
  REROLL: 'midjourney.action.reroll',
  INPAINT: 'midjourney.action.inpaint',
  ZOOM: 'midjourney.action.zoom',
  CUSTOM_ZOOM: 'midjourney.action.custom_zoom',
  MODAL: 'midjourney.action.modal',
  SWAP_FACE: 'midjourney.action.swap_face',
};
/** Drawing task statuses (spec doc 3 §4) with their label and colour. */
const STATUSES: Record<
  string,
  { label: string; color: 'default' | 'info' | 'primary' | 'success' | 'error' | 'warning' }
> = {
  NOT_START: { label: 'midjourney.status.not_start', color: 'default' },
  SUBMITTED: { label: 'midjourney.status.submitted', color: 'info' },
  IN_PROGRESS: { label: 'midjourney.status.in_progress', color: 'primary' },
  SUCCESS: { label: 'midjourney.status.success', color: 'success' },
  FAILURE: { label: 'midjourney.status.failure', color: 'error' },
  MODAL: { label: 'midjourney.status.modal', color: 'warning' },
};
/** Submit result codes (spec doc 3 §4). */
const CODES: Record<number, { label: string; color: 'success' | 'info' | 'warning' | 'default' }> = {
  1: { label: 'midjourney.code.submitted', color: 'success' },
  21: { label: 'midjourney.code.waiting', color: 'info' },
  22: { label: 'midjourney.code.duplicate', color: 'warning' },
  0: { label: 'midjourney.code.not_submitted', color: 'default' },
};
const CHANNEL_COLORS = ['primary', 'secondary', 'info', 'success', 'warning'] as const;

/** Drawing log default range (spec doc 3 §9): the last 30 days plus 1 hour ahead, in milliseconds. */
function defaultRange() {
  const now = Date.now();
  return { start_timestamp: now - 30 * 24 * 3600 * 1000, end_timestamp: now + 3600 * 1000 };
}

/** The drawing log (spec doc 3 §2 "Drawing log page"). */
export function MidjourneyList() {
  const translate = useTranslate();
  const user = useSessionUser();
  const admin = (user?.role ?? 0) >= ROLE.admin;
  const { status } = useStatus();
  const [defaults] = useState(defaultRange);
  const [text, setText] = useState<string | undefined>();
  const [image, setImage] = useState<string | undefined>();
  const { copy, dialog } = useClipboard();
  const fields: FilterField[] = [
    ...(admin ? [{ key: 'channel_id', label: 'midjourney.fields.channel', kind: 'number' } as const] : []),
    { key: 'mj_id', label: 'midjourney.fields.mj_id', kind: 'text' },
    { key: 'start_timestamp', label: 'log.filters.start', kind: 'time' },
    { key: 'end_timestamp', label: 'log.filters.end', kind: 'time' },
  ];
  const long = (value: string) =>
    value ? (
      <Link component="button" type="button" onClick={() => setText(value)} sx={{ textAlign: 'left' }}>
        <Typography variant="body2" noWrap sx={{ maxWidth: 200 }}>
          {value}
        </Typography>
      </Link>
    ) : (
      ''
    );
  return (
    <Box data-testid="midjourney-page" sx={{ width: '100%', minWidth: 0, contain: 'inline-size' }}>
      {admin && status.mj_notify_enabled !== true && (
        <Alert severity="warning" sx={{ mb: 1 }} data-testid="midjourney-notify-warning">
          {translate('midjourney.notify_disabled')}
        </Alert>
      )}
      <List
        resource="midjourney"
        title="midjourney.title"
        sort={{ field: 'submit_time', order: 'DESC' }}
        perPage={10}
        filterDefaultValues={defaults}
        storeKey={false}
        disableSyncWithLocation
        queryOptions={liveQueryOptions}
        actions={false}
        pagination={<PageBar />}
        empty={false}
        exporter={false}
      >
        <TaskFilterBar fields={fields} millis testId="midjourney-filters" />
        <Box sx={{ overflowX: 'auto', width: '100%', contain: 'inline-size' }}>
          <Datagrid bulkActionButtons={false} rowClick={false} sx={{ '& td': { whiteSpace: 'nowrap' } }}>
            <FunctionField
              label="midjourney.fields.submit_time"
              render={(r: DrawingTask) => formatMillis(r.submit_time)}
            />
            <FunctionField
              label="midjourney.fields.finish_time"
              render={(r: DrawingTask) => (r.finish_time ? formatMillis(r.finish_time) : '')}
            />
            <FunctionField label="midjourney.fields.duration" render={(r: DrawingTask) => <Duration task={r} />} />
            {admin && (
              <FunctionField
                label="midjourney.fields.channel"
                render={(r: DrawingTask) => (
                  <Chip
                    size="small"
                    color={CHANNEL_COLORS[r.channel_id % CHANNEL_COLORS.length]}
                    label={`#${r.channel_id}`}
                    onClick={() => void copy(String(r.channel_id))}
                  />
                )}
              />
            )}
            {admin && (
              <FunctionField label="midjourney.fields.username" render={(r: DrawingTask) => r.username ?? ''} />
            )}
            <FunctionField
              label="midjourney.fields.action"
              render={(r: DrawingTask) => (
                <Chip
                  size="small"
                  variant="outlined"
                  label={translate(ACTIONS[r.action] ?? 'midjourney.action.unknown')}
                />
              )}
            />
            <FunctionField label="midjourney.fields.mj_id" render={(r: DrawingTask) => r.mj_id} />
            <FunctionField
              label="midjourney.fields.code"
              render={(r: DrawingTask) => {
                const code = CODES[r.code];
                return (
                  <Chip
                    size="small"
                    color={code?.color ?? 'default'}
                    label={translate(code?.label ?? 'midjourney.code.unknown')}
                  />
                );
              }}
            />
            <FunctionField
              label="midjourney.fields.status"
              render={(r: DrawingTask) => (
                <Chip
                  size="small"
                  data-testid="midjourney-status"
                  color={STATUSES[r.status]?.color ?? 'default'}
                  label={translate(STATUSES[r.status]?.label ?? 'midjourney.status.unknown')}
                />
              )}
            />
            <FunctionField
              label="midjourney.fields.progress"
              render={(r: DrawingTask) => {
                const value = Number.parseInt(r.progress, 10) || 0;
                return (
                  <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, minWidth: 120 }}>
                    <LinearProgress
                      variant="determinate"
                      value={Math.min(100, value)}
                      color={r.status === 'FAILURE' ? 'warning' : 'primary'}
                      sx={{ flex: 1 }}
                    />
                    <Typography variant="caption" data-testid="midjourney-progress">
                      {r.progress || '0%'}
                    </Typography>
                  </Box>
                );
              }}
            />
            <FunctionField
              label="midjourney.fields.image"
              render={(r: DrawingTask) =>
                r.image_url ? (
                  <Link
                    component="button"
                    type="button"
                    onClick={() => setImage(r.image_url)}
                    title={translate('midjourney.view_image')}
                    data-testid="midjourney-thumbnail"
                  >
                    <Box
                      component="img"
                      src={r.image_url}
                      alt={translate('midjourney.view_image')}
                      loading="lazy"
                      sx={{ width: 48, height: 48, objectFit: 'cover', borderRadius: 1, display: 'block' }}
                    />
                  </Link>
                ) : (
                  translate('midjourney.no_image')
                )
              }
            />
            <FunctionField label="midjourney.fields.prompt" render={(r: DrawingTask) => long(r.prompt)} />
            <FunctionField label="midjourney.fields.prompt_en" render={(r: DrawingTask) => long(r.prompt_en)} />
            <FunctionField
              label="midjourney.fields.fail_reason"
              render={(r: DrawingTask) => <span data-testid="midjourney-fail-reason">{long(r.fail_reason)}</span>}
            />
            <FunctionField
              label="midjourney.fields.quota"
              render={(r: DrawingTask) => formatQuota(r.quota ?? 0, status, 6)}
            />
          </Datagrid>
        </Box>
      </List>
      <Dialog open={text !== undefined} onClose={() => setText(undefined)} fullWidth maxWidth="sm">
        <DialogContent>
          <Typography sx={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>{text}</Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setText(undefined)}>{translate('common.close')}</Button>
        </DialogActions>
      </Dialog>
      <Dialog open={image !== undefined} onClose={() => setImage(undefined)} maxWidth="md">
        <DialogTitle>{translate('midjourney.fields.image')}</DialogTitle>
        <DialogContent>
          {image && (
            <Box
              component="img"
              src={image}
              alt=""
              sx={{ maxWidth: '100%', display: 'block' }}
              data-testid="midjourney-image"
            />
          )}
        </DialogContent>
        <DialogActions>
          {image && (
            <Button component="a" href={image} target="_blank" rel="noreferrer">
              {translate('midjourney.open_image')}
            </Button>
          )}
          <Button onClick={() => setImage(undefined)}>{translate('common.close')}</Button>
        </DialogActions>
      </Dialog>
      {dialog}
    </Box>
  );
}

/** Time taken: green up to 60 s, red above (spec doc 3 §9); nothing until the task finishes. */
function Duration({ task }: { task: DrawingTask }) {
  const translate = useTranslate();
  if (!task.finish_time || !task.submit_time) return <span>{translate('midjourney.unfinished')}</span>;
  const seconds = (task.finish_time - task.submit_time) / 1000;
  return <Chip size="small" color={seconds <= 60 ? 'success' : 'error'} label={`${seconds.toFixed(1)} s`} />;
}
