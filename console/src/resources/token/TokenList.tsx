import ContentCopy from '@mui/icons-material/ContentCopy';
import Forum from '@mui/icons-material/Forum';
import { Alert, Box, Button, Chip, IconButton, Menu, MenuItem, Tooltip, Typography } from '@mui/material';
import { type MouseEvent, useState } from 'react';
import {
  BulkDeleteButton,
  CreateButton,
  Datagrid,
  DeleteButton,
  EditButton,
  FunctionField,
  List,
  Pagination,
  SearchInput,
  TextField,
  TextInput,
  TopToolbar,
  useListContext,
  useNotify,
  useRecordContext,
  useRefresh,
  useTranslate,
  useUpdate,
} from 'react-admin';
import { formatQuota } from '../../format/quota.ts';
import { formatSeconds } from '../../format/time.ts';
import { type ChatClient, chatClients, skKey } from '../../pages/user/chatLink.ts';
import { revealKey, revealKeys, serverAddress } from '../../pages/user/chatTokens.ts';
import { useClipboard } from '../../pages/user/clipboard.tsx';
import { errorMessage } from '../../providers/http.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { chatLinks } from '../../status/status.ts';
import { PeriodUsageSummary } from '../periods/PeriodLimits.tsx';
import type { WithPeriodLimits } from '../periods/periods.ts';
import { PAGE_SIZES, TOKEN_STATUS, type TokenRecord } from './token.ts';

/** The tokens page (spec doc 2 §2 "Tokens page"): warning, search, list, batch copy and chat links. */
export function TokenList() {
  const translate = useTranslate();
  const { copy, dialog } = useClipboard();
  return (
    <Box data-testid="token-page" sx={{ width: '100%', minWidth: 0, contain: 'inline-size' }}>
      <Alert severity="warning" sx={{ mb: 1 }} data-testid="token-warning">
        {translate('token.warning')}
      </Alert>
      <List
        resource="token"
        title="token.title"
        sort={{ field: 'id', order: 'DESC' }}
        perPage={10}
        filters={[
          <SearchInput key="q" source="q" alwaysOn placeholder={translate('token.search_keyword')} />,
          <TextInput key="token" source="token" label="token.search_key" alwaysOn resettable />,
        ]}
        actions={<TokenActions copy={copy} />}
        pagination={<Pagination rowsPerPageOptions={PAGE_SIZES} />}
        empty={false}
        exporter={false}
      >
        <Datagrid
          rowClick={false}
          bulkActionButtons={<TokenBulkActions copy={copy} />}
          rowSx={(record) => (record.status === TOKEN_STATUS.disabled ? { bgcolor: 'action.hover' } : {})}
          data-testid="token-table"
          sx={{ '& td.column-name, & td.column-expired_time': { whiteSpace: 'nowrap' } }}
        >
          <TextField source="name" label="token.fields.name" />
          <FunctionField label="token.fields.status" render={() => <TokenStatus />} />
          <FunctionField label="token.fields.used_quota" render={() => <UsedQuota />} />
          <FunctionField label="token.fields.remain_quota" render={() => <RemainQuota />} />
          <FunctionField
            label="periods.column"
            render={(record: WithPeriodLimits) => <PeriodUsageSummary usage={record.period_usage} />}
          />
          <FunctionField
            label="token.fields.group"
            render={(record: TokenRecord) => record.group || translate('token.group_default')}
          />
          <FunctionField label="token.fields.key" render={() => <KeyCell copy={copy} />} />
          <FunctionField
            source="expired_time"
            label="token.fields.expired_time"
            render={(record: TokenRecord) =>
              record.expired_time === -1 ? translate('token.never_expires') : formatSeconds(record.expired_time)
            }
          />
          <FunctionField label="token.actions" render={() => <RowActions />} />
        </Datagrid>
      </List>
      {dialog}
    </Box>
  );
}

type Copy = (text: string, shown?: string) => Promise<boolean>;

function TokenActions({ copy }: { copy: Copy }) {
  return (
    <TopToolbar>
      <CopySelectedButton copy={copy} />
      <CreateButton label="token.create" />
    </TopToolbar>
  );
}

function TokenBulkActions({ copy }: { copy: Copy }) {
  return (
    <>
      <CopySelectedButton copy={copy} />
      <BulkDeleteButton mutationMode="pessimistic" />
    </>
  );
}

/** Batch copy (spec doc 2 §5: copying needs a selection): one `name<TAB>key` line per selected token. */
function CopySelectedButton({ copy }: { copy: Copy }) {
  const translate = useTranslate();
  const notify = useNotify();
  const { selectedIds = [], data = [] } = useListContext<TokenRecord>();
  const onClick = () => {
    const chosen = data.filter((token) => selectedIds.includes(token.id));
    if (chosen.length === 0) {
      notify('token.copy_select_first', { type: 'warning' });
      return;
    }
    revealKeys(chosen.map((token) => token.id))
      .then((keys) => {
        const text = chosen.map((token) => `${token.name}\t${skKey(keys[token.id] ?? '')}`).join('\n');
        return copy(text, translate('token.copied_count', { count: chosen.length }));
      })
      .catch((error) => notify(errorMessage(error), { type: 'error' }));
  };
  return (
    <Button size="small" startIcon={<ContentCopy />} onClick={onClick} data-testid="token-copy-selected">
      {translate('token.copy_selected')}
    </Button>
  );
}

/** Status (spec doc 2 §4): 1 enabled (or enabled with model limits), 2 disabled, 3 expired, 4 exhausted. */
function TokenStatus() {
  const record = useRecordContext<TokenRecord>();
  const translate = useTranslate();
  if (!record) return null;
  switch (record.status) {
    case TOKEN_STATUS.enabled:
      return record.model_limits_enabled ? (
        <Chip size="small" color="success" variant="outlined" label={translate('token.status.enabled_limited')} />
      ) : (
        <Chip size="small" color="success" label={translate('token.status.enabled')} />
      );
    case TOKEN_STATUS.disabled:
      return <Chip size="small" label={translate('token.status.disabled')} />;
    case TOKEN_STATUS.expired:
      return <Chip size="small" color="warning" label={translate('token.status.expired')} />;
    case TOKEN_STATUS.exhausted:
      return <Chip size="small" color="error" label={translate('token.status.exhausted')} />;
    default:
      return <Chip size="small" label={translate('token.status.unknown')} />;
  }
}

function UsedQuota() {
  const record = useRecordContext<TokenRecord>();
  const { status } = useStatus();
  return record ? <span>{formatQuota(record.used_quota, status)}</span> : null;
}

function RemainQuota() {
  const record = useRecordContext<TokenRecord>();
  const { status } = useStatus();
  const translate = useTranslate();
  if (!record) return null;
  if (record.unlimited_quota) return <Chip size="small" variant="outlined" label={translate('token.unlimited')} />;
  return <span>{formatQuota(record.remain_quota, status)}</span>;
}

/**
 * The key as the list answers it, masked (sk-abcd**********wxyz), with a copy button that asks the server
 * for the whole key (POST /api/token/{id}/key) and copies it with `sk-`.
 */
function KeyCell({ copy }: { copy: Copy }) {
  const record = useRecordContext<TokenRecord>();
  const translate = useTranslate();
  const notify = useNotify();
  if (!record) return null;
  const onCopy = () =>
    revealKey(record.id)
      .then((key) => copy(skKey(key)))
      .catch((error) => notify(errorMessage(error), { type: 'error' }));
  return (
    <Box sx={{ display: 'flex', alignItems: 'center', gap: 0.5 }}>
      <Typography variant="body2" sx={{ fontFamily: 'monospace', whiteSpace: 'nowrap' }}>
        {skKey(record.key)}
      </Typography>
      <Tooltip title={translate('token.copy_key')}>
        <IconButton size="small" onClick={() => void onCopy()} data-testid="token-copy-key">
          <ContentCopy fontSize="inherit" />
        </IconButton>
      </Tooltip>
    </Box>
  );
}

function RowActions() {
  const record = useRecordContext<TokenRecord>();
  if (!record) return null;
  return (
    <Box sx={{ display: 'grid', gridTemplateColumns: 'auto auto', justifyContent: 'start', columnGap: 0.5 }}>
      <ChatButton />
      <ToggleButton />
      <EditButton label="ra.action.edit" />
      <DeleteButton mutationMode="pessimistic" label="ra.action.delete" />
    </Box>
  );
}

/** Enable or disable through a status-only update (spec doc 2 §4); the server refuses expired or empty tokens. */
function ToggleButton() {
  const record = useRecordContext<TokenRecord>();
  const translate = useTranslate();
  const notify = useNotify();
  const refresh = useRefresh();
  const [update, { isPending }] = useUpdate();
  if (!record) return null;
  const enabled = record.status === TOKEN_STATUS.enabled;
  const onClick = () =>
    update(
      'token',
      { id: record.id, data: { status: enabled ? TOKEN_STATUS.disabled : TOKEN_STATUS.enabled }, previousData: record },
      {
        mutationMode: 'pessimistic',
        onSuccess: () => {
          notify('token.status_updated', { type: 'success' });
          refresh();
        },
        onError: (error) => notify(errorMessage(error), { type: 'error' }),
      },
    );
  return (
    <Button
      size="small"
      color={enabled ? 'warning' : 'success'}
      disabled={isPending}
      onClick={onClick}
      data-testid={enabled ? 'token-disable' : 'token-enable'}
    >
      {translate(enabled ? 'token.disable' : 'token.enable')}
    </Button>
  );
}

/**
 * Chat links (spec doc 2 §2, §8): one entry per chat client (chatClients), opening it with this token's
 * key; a saved value of the wrong shape or no chat client at all says so.
 */
function ChatButton() {
  const record = useRecordContext<TokenRecord>();
  const translate = useTranslate();
  const notify = useNotify();
  const { status } = useStatus();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  if (!record) return null;
  const clients = chatClients(status, chatLinks(status));
  const open = (client: ChatClient) => {
    setAnchor(null);
    // The window opens within the click (a popup blocker allows only that); the key arrives after.
    const chat = window.open('', '_blank');
    revealKey(record.id)
      .then((key) => {
        if (!chat) return;
        chat.opener = null;
        chat.location.href = client.url(key, serverAddress(status));
      })
      .catch((error) => {
        chat?.close();
        notify(errorMessage(error), { type: 'error' });
      });
  };
  const onClick = (event: MouseEvent<HTMLElement>) => {
    if (clients === undefined) notify('token.chat_bad_config', { type: 'error' });
    else if (clients.length === 0) notify('token.chat_not_configured', { type: 'warning' });
    else if (clients.length === 1) open(clients[0]!);
    else setAnchor(event.currentTarget);
  };
  return (
    <>
      <Button size="small" startIcon={<Forum />} onClick={onClick} data-testid="token-chat">
        {translate('token.chat')}
      </Button>
      <Menu anchorEl={anchor} open={anchor !== null} onClose={() => setAnchor(null)}>
        {(clients ?? []).map((client) => (
          <MenuItem key={client.name} onClick={() => open(client)}>
            {client.name}
          </MenuItem>
        ))}
      </Menu>
    </>
  );
}
