import {
  Box,
  Button,
  Chip,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Link,
  Typography,
} from '@mui/material';
import { useState } from 'react';
import { Datagrid, FunctionField, List, useTranslate } from 'react-admin';
import { formatQuota } from '../../format/quota.ts';
import { formatSeconds, startOfToday } from '../../format/time.ts';
import { ROLE, useSessionUser } from '../../providers/session.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { PageBar } from '../log/LogList.tsx';
import { liveQueryOptions } from '../midjourney/live.ts';
import { type FilterField, TaskFilterBar } from '../midjourney/TaskFilterBar.tsx';
import { taskResults } from './result.ts';
import { VideoResult } from './VideoResult.tsx';

/** A creative task (spec doc 3 §3). */
interface CreativeTask {
  id: number;
  submit_time: number;
  finish_time: number;
  progress: string;
  channel_id: number;
  platform: string;
  action: string;
  task_id: string;
  status: string;
  fail_reason: string;
  quota: number;
  user_id?: number;
  data: unknown;
  username?: string;
  [key: string]: unknown;
}

type Color = 'default' | 'info' | 'primary' | 'success' | 'error' | 'warning' | 'secondary';

/** Creative task statuses (spec doc 3 §4); empty is "submitting". */
const STATUSES: Record<string, { label: string; color: Color }> = {
  SUCCESS: { label: 'task.status.success', color: 'success' },
  NOT_START: { label: 'task.status.not_start', color: 'default' },
  SUBMITTED: { label: 'task.status.submitted', color: 'info' },
  IN_PROGRESS: { label: 'task.status.in_progress', color: 'primary' },
  FAILURE: { label: 'task.status.failure', color: 'error' },
  QUEUED: { label: 'task.status.queued', color: 'secondary' },
  UNKNOWN: { label: 'task.status.unknown', color: 'default' },
  '': { label: 'task.status.submitting', color: 'warning' },
};
const ACTIONS: Record<string, string> = {
  MUSIC: 'task.action.music',
  LYRICS: 'task.action.lyrics',
  GENERATE: 'task.action.generate',
  REMIX: 'task.action.remix',
};
const PLATFORMS: Record<string, string> = { suno: 'task.platform.suno', video: 'task.platform.video' };

/** The task log (spec doc 3 §2 "Task log page"): from today 00:00 by default (spec doc 3 §9). */
export function TaskList() {
  const translate = useTranslate();
  const user = useSessionUser();
  const admin = (user?.role ?? 0) >= ROLE.admin;
  const { status } = useStatus();
  const [image, setImage] = useState<string | undefined>();
  const [defaults] = useState(() => ({ start_timestamp: Math.floor(startOfToday().getTime() / 1000) }));
  const [detail, setDetail] = useState<CreativeTask | undefined>();
  const [text, setText] = useState<string | undefined>();
  const fields: FilterField[] = [
    ...(admin ? [{ key: 'channel_id', label: 'task.fields.channel', kind: 'number' } as const] : []),
    { key: 'task_id', label: 'task.fields.task_id', kind: 'text' },
    { key: 'start_timestamp', label: 'log.filters.start', kind: 'time' },
    { key: 'end_timestamp', label: 'log.filters.end', kind: 'time' },
  ];
  return (
    <Box data-testid="task-page" sx={{ width: '100%', minWidth: 0, contain: 'inline-size' }}>
      <List
        resource="task"
        title="task.title"
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
        <TaskFilterBar fields={fields} millis={false} testId="task-filters" />
        <Box sx={{ overflowX: 'auto', width: '100%', contain: 'inline-size' }}>
          <Datagrid bulkActionButtons={false} rowClick={false} sx={{ '& td': { whiteSpace: 'nowrap' } }}>
            <FunctionField label="task.fields.submit_time" render={(r: CreativeTask) => formatSeconds(r.submit_time)} />
            <FunctionField label="task.fields.finish_time" render={(r: CreativeTask) => formatSeconds(r.finish_time)} />
            <FunctionField label="task.fields.progress" render={(r: CreativeTask) => <Progress task={r} />} />
            <FunctionField
              label="task.fields.duration"
              render={(r: CreativeTask) =>
                r.finish_time && r.submit_time ? (
                  <Chip size="small" label={`${r.finish_time - r.submit_time} s`} />
                ) : (
                  translate('task.unfinished')
                )
              }
            />
            {admin && (
              <FunctionField
                label="task.fields.channel"
                render={(r: CreativeTask) => <Chip size="small" variant="outlined" label={`#${r.channel_id}`} />}
              />
            )}
            {admin && <FunctionField label="task.fields.username" render={(r: CreativeTask) => r.username ?? ''} />}
            <FunctionField
              label="task.fields.platform"
              render={(r: CreativeTask) => (
                <Chip size="small" label={translate(PLATFORMS[r.platform] ?? 'task.platform.unknown')} />
              )}
            />
            <FunctionField
              label="task.fields.action"
              render={(r: CreativeTask) => (
                <Chip size="small" variant="outlined" label={translate(ACTIONS[r.action] ?? 'task.action.unknown')} />
              )}
            />
            <FunctionField
              label="task.fields.task_id"
              render={(r: CreativeTask) => (
                <Link component="button" type="button" onClick={() => setDetail(r)}>
                  {r.task_id}
                </Link>
              )}
            />
            <FunctionField
              label="task.fields.status"
              render={(r: CreativeTask) => {
                const known = STATUSES[r.status ?? ''];
                return (
                  <Chip
                    size="small"
                    data-testid="task-status"
                    color={known?.color ?? 'default'}
                    label={translate(known?.label ?? 'task.status.unknown')}
                  />
                );
              }}
            />
            <FunctionField
              label="task.fields.fail_reason"
              render={(r: CreativeTask) =>
                r.fail_reason ? (
                  <Link component="button" type="button" onClick={() => setText(r.fail_reason)}>
                    <Typography variant="body2" noWrap sx={{ maxWidth: 220 }} data-testid="task-fail-reason">
                      {r.fail_reason}
                    </Typography>
                  </Link>
                ) : (
                  ''
                )
              }
            />
            <FunctionField
              label="task.fields.result"
              render={(r: CreativeTask) => <Results task={r} onImage={setImage} />}
            />
            <FunctionField
              label="task.fields.quota"
              render={(r: CreativeTask) => formatQuota(r.quota ?? 0, status, 6)}
            />
          </Datagrid>
        </Box>
      </List>
      <Dialog open={detail !== undefined} onClose={() => setDetail(undefined)} fullWidth maxWidth="md">
        <DialogTitle>{translate('task.detail')}</DialogTitle>
        <DialogContent>
          <Box
            component="pre"
            sx={{ m: 0, fontSize: 13, whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}
            data-testid="task-detail"
          >
            {JSON.stringify(detail, null, 2)}
          </Box>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setDetail(undefined)}>{translate('common.close')}</Button>
        </DialogActions>
      </Dialog>
      <Dialog open={image !== undefined} onClose={() => setImage(undefined)} maxWidth="md">
        <DialogTitle>{translate('task.fields.result')}</DialogTitle>
        <DialogContent>
          {image && <Box component="img" src={image} alt="" sx={{ maxWidth: '100%', display: 'block' }} />}
        </DialogContent>
        <DialogActions>
          {image && (
            <Button component="a" href={image} target="_blank" rel="noreferrer">
              {translate('task.open_result')}
            </Button>
          )}
          <Button onClick={() => setImage(undefined)}>{translate('common.close')}</Button>
        </DialogActions>
      </Dialog>
      <Dialog open={text !== undefined} onClose={() => setText(undefined)} fullWidth maxWidth="sm">
        <DialogContent>
          <Typography sx={{ whiteSpace: 'pre-wrap' }}>{text}</Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setText(undefined)}>{translate('common.close')}</Button>
        </DialogActions>
      </Dialog>
    </Box>
  );
}

/** The task's results from its data: images as thumbnails that open a preview, anything else as a link. */
function Results({ task, onImage }: { task: CreativeTask; onImage: (url: string) => void }) {
  const translate = useTranslate();
  const user = useSessionUser();
  // A video plays from the gateway, for its owner only; its vendor's address is never linked.
  if (task.platform === 'video') {
    return task.status === 'SUCCESS' && task.user_id === user?.id ? <VideoResult taskId={task.task_id} /> : null;
  }
  const results = taskResults(task.data);
  if (results.length === 0) return null;
  return (
    <Box sx={{ display: 'flex', gap: 1, alignItems: 'center' }} data-testid="task-results">
      {results.map((result) =>
        result.image ? (
          <Link key={result.url} component="button" type="button" onClick={() => onImage(result.url)}>
            <Box
              component="img"
              src={result.url}
              alt={result.key}
              loading="lazy"
              sx={{ width: 40, height: 40, objectFit: 'cover', borderRadius: 1, display: 'block' }}
            />
          </Link>
        ) : (
          <Link key={result.url} href={result.url} target="_blank" rel="noreferrer" title={result.url}>
            {translate('task.open_result')}
          </Link>
        ),
      )}
    </Box>
  );
}

/** Progress as a circle: a percent string fills it; other text is shown as is. */
function Progress({ task }: { task: CreativeTask }) {
  const percent = /^\d+(\.\d+)?%$/.test(task.progress ?? '') ? Number.parseFloat(task.progress) : undefined;
  if (percent === undefined) return <span data-testid="task-progress">{task.progress}</span>;
  return (
    <Box sx={{ position: 'relative', display: 'inline-flex' }}>
      <CircularProgress variant="determinate" value={Math.min(100, percent)} size={36} />
      <Box sx={{ position: 'absolute', inset: 0, display: 'flex', alignItems: 'center', justifyContent: 'center' }}>
        <Typography variant="caption" sx={{ fontSize: 10 }} data-testid="task-progress">
          {task.progress}
        </Typography>
      </Box>
    </Box>
  );
}
