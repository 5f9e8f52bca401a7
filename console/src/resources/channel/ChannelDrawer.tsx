import Close from '@mui/icons-material/Close';
import {
  Alert,
  Autocomplete,
  Box,
  Button,
  Chip,
  CircularProgress,
  Drawer,
  FormControl,
  FormControlLabel,
  FormLabel,
  IconButton,
  MenuItem,
  Radio,
  RadioGroup,
  Stack,
  Switch,
  TextField,
  Typography,
} from '@mui/material';
import { type ReactNode, useEffect, useMemo, useState } from 'react';
import { useLocaleState, useNotify, useTranslate } from 'react-admin';
import { api, errorMessage } from '../../providers/http.ts';
import { type ConfirmRequest, useConfirm } from '../admin-shared.tsx';
import { useChannelTypes } from './channel-types.ts';
import {
  addCustomModels,
  baseUrlEndsWithV1,
  type Channel,
  type ChannelFormValues,
  channelPayload,
  channelToValues,
  defaultChannelValues,
  isJsonOrEmpty,
  passThroughOf,
  validateChannel,
  withPassThrough,
} from './form.ts';
import { PrefillModels } from './PrefillModels.tsx';
import { ManagedBadge } from './parts.tsx';

export interface ChannelDrawerProps {
  /** 'new' for the create drawer, a channel id for the edit drawer. */
  target: 'new' | number;
  onClose: () => void;
  onSaved: () => void;
}

/** Lists the drawer offers: groups, every known model, the models of each channel type. */
function useChoices() {
  const [groups, setGroups] = useState<string[]>([]);
  const [knownModels, setKnownModels] = useState<string[]>([]);
  const [byType, setByType] = useState<Record<string, string[]>>({});
  useEffect(() => {
    api
      .get<string[]>('/api/group/')
      .then((list) => setGroups(list ?? []))
      .catch(() => {});
    api
      .get<Array<{ id: string }>>('/api/channel/models')
      .then((list) => setKnownModels((list ?? []).map((m) => m.id)))
      .catch(() => {});
    api
      .get<Record<string, string[]>>('/api/models')
      .then((map) => setByType(map ?? {}))
      .catch(() => {});
  }, []);
  return { groups, knownModels, byType };
}

const MAPPING_EXAMPLE = '{\n  "gpt-3.5-turbo": "gpt-3.5-turbo-0125"\n}';

/**
 * The create/edit side drawer (spec doc 2 §2, §3 Channel, §5 Channel): every field, the checks of §5 as
 * messages, model fetching from the upstream, and read-only fields for a channel a Kubernetes
 * resource manages (the gateway refuses edits of its fields).
 */
export function ChannelDrawer({ target, onClose, onSaved }: ChannelDrawerProps) {
  const translate = useTranslate();
  const [locale] = useLocaleState();
  const language = locale === 'en' ? 'en' : 'zh';
  const notify = useNotify();
  const { ask, dialog } = useConfirm();
  const isNew = target === 'new';
  const [values, setValues] = useState<ChannelFormValues>(defaultChannelValues);
  const [channel, setChannel] = useState<Channel>();
  const [loading, setLoading] = useState(!isNew);
  const [saving, setSaving] = useState(false);
  const [fetching, setFetching] = useState(false);
  const [customModels, setCustomModels] = useState('');
  const [jsonErrors, setJsonErrors] = useState<Record<string, boolean>>({});
  const { groups, knownModels, byType } = useChoices();
  const types = useChannelTypes();
  const managed = Boolean(channel?.managed_by);
  const readOnly = managed;

  useEffect(() => {
    if (isNew) {
      setValues(defaultChannelValues());
      setChannel(undefined);
      return;
    }
    setLoading(true);
    api
      .get<Channel>(`/api/channel/${target}`)
      .then((loaded) => {
        setChannel(loaded);
        setValues(channelToValues(loaded));
      })
      .catch((error) => {
        notify(error?.code === 'CHANNEL_NOT_FOUND' ? 'channel.messages.not_found' : errorMessage(error), {
          type: 'error',
        });
        onClose();
      })
      .finally(() => setLoading(false));
  }, [isNew, target, notify, onClose]);

  const set = <K extends keyof ChannelFormValues>(key: K, value: ChannelFormValues[K]) =>
    setValues((current) => ({ ...current, [key]: value }));

  const modelOptions = useMemo(
    () => [...new Set([...values.models, ...knownModels])].sort((a, b) => a.localeCompare(b)),
    [values.models, knownModels],
  );

  const checkJson = (field: string, text: string) => {
    const bad = !isJsonOrEmpty(text);
    setJsonErrors((current) => ({ ...current, [field]: bad }));
  };

  const fetchModels = async () => {
    if (isNew && values.key.trim() === '') {
      notify('channel.validation.key_required', { type: 'error' });
      return;
    }
    setFetching(true);
    try {
      const models = isNew
        ? await api.post<string[]>('/api/channel/fetch_models', {
            base_url: values.base_url.trim().replace(/\/+$/, ''),
            type: values.type,
            key: values.key.trim(),
            other: values.other.trim(),
          })
        : await api.get<string[]>(`/api/channel/fetch_models/${target}`);
      set('models', [...new Set(models ?? [])]);
      notify('channel.messages.models_fetched', { type: 'success', messageArgs: { count: models?.length ?? 0 } });
    } catch (error) {
      const reason = errorMessage(error);
      notify(`${translate('channel.messages.fetch_models_failed')}: ${translate(reason, { _: reason })}`, {
        type: 'error',
      });
    } finally {
      setFetching(false);
    }
  };

  const addCustom = () => {
    const { models, duplicates } = addCustomModels(values.models, customModels);
    set('models', models);
    setCustomModels('');
    if (duplicates) notify('channel.validation.models_exist', { type: 'error' });
  };

  const save = async () => {
    const problem = validateChannel(values, isNew);
    if (problem) {
      notify(problem.message, {
        type: 'error',
        messageArgs: problem.field ? { field: translate(problem.field) } : undefined,
      });
      return;
    }
    const submit = async () => {
      setSaving(true);
      try {
        const body = channelPayload(values, isNew ? undefined : (target as number));
        const envelope = isNew
          ? await api.request('POST', '/api/channel/', { body })
          : await api.request('PUT', '/api/channel/', { body });
        notify(envelope.message || (isNew ? 'channel.messages.created' : 'channel.messages.updated'), {
          type: 'success',
        });
        onSaved();
      } catch (error) {
        notify(errorMessage(error), { type: 'error' });
      } finally {
        setSaving(false);
      }
    };
    if (baseUrlEndsWithV1(values.base_url)) {
      const request: ConfirmRequest = {
        title: 'channel.form.v1_warning_title',
        content: 'channel.form.v1_warning',
        onConfirm: submit,
      };
      ask(request);
      return;
    }
    await submit();
  };

  const type = types.find((t) => t.id === values.type);
  // The picker offers the offered types, plus the channel's own type when it is a stored row of one no longer offered.
  const pickable = types.filter((t) => t.offered || t.id === channel?.type);
  const typeModels = byType[String(values.type)] ?? [];

  const json = (field: keyof ChannelFormValues & string, label: string, placeholder?: string, extra?: ReactNode) => (
    <Box>
      <TextField
        label={translate(label)}
        value={values[field] as string}
        onChange={(event) => set(field, event.target.value as never)}
        onBlur={(event) => checkJson(field, event.target.value)}
        error={jsonErrors[field]}
        helperText={jsonErrors[field] ? translate('channel.validation.invalid_json') : undefined}
        placeholder={placeholder}
        multiline
        minRows={2}
        maxRows={10}
        fullWidth
        disabled={readOnly}
        slotProps={{ htmlInput: { 'data-testid': `channel-${field}` } }}
      />
      {extra}
    </Box>
  );

  return (
    <Drawer
      anchor="right"
      open
      onClose={onClose}
      slotProps={{ paper: { sx: { width: { xs: '100%', sm: 640 } } } }}
      data-testid="channel-drawer"
    >
      <Box sx={{ display: 'flex', alignItems: 'center', px: 2, py: 1.5, gap: 1 }}>
        <Typography variant="h6" sx={{ flex: 1 }}>
          {translate(isNew ? 'channel.form.create_title' : 'channel.form.edit_title')}
        </Typography>
        {channel?.managed_by && <ManagedBadge channel={channel} />}
        <IconButton onClick={onClose} aria-label={translate('common.close')}>
          <Close />
        </IconButton>
      </Box>
      {loading ? (
        <Box sx={{ display: 'flex', justifyContent: 'center', p: 4 }}>
          <CircularProgress />
        </Box>
      ) : (
        <Stack spacing={2} sx={{ px: 2, pb: 2, overflowY: 'auto', flex: 1 }}>
          {managed && channel && (
            <Alert severity="info" data-testid="managed-notice">
              {translate('channel.managed.notice', {
                resource: `${channel.managed_namespace ?? ''}/${channel.managed_name ?? ''}`,
              })}
            </Alert>
          )}
          <TextField
            select
            label={translate('channel.fields.type')}
            value={values.type}
            onChange={(event) => set('type', Number(event.target.value))}
            disabled={readOnly}
            fullWidth
            slotProps={{ htmlInput: { 'data-testid': 'channel-type' } }}
          >
            {pickable.map((option) => (
              <MenuItem key={option.id} value={option.id} data-testid={`channel-type-${option.id}`}>
                {option.name}
              </MenuItem>
            ))}
          </TextField>
          {type && !type.offered && (
            <Alert severity="error" data-testid="channel-type-unsupported">
              {translate('channel.form.type_unsupported', { name: type.name, reason: type.reason[language] })}
            </Alert>
          )}
          {values.type === 3 && <Alert severity="warning">{translate('channel.form.azure_hint')}</Alert>}
          {values.type === 40 && <Alert severity="info">{translate('channel.form.partner_hint')}</Alert>}
          <TextField
            label={translate('channel.fields.name')}
            value={values.name}
            onChange={(event) => set('name', event.target.value)}
            required
            disabled={readOnly}
            fullWidth
            slotProps={{ htmlInput: { 'data-testid': 'channel-name' } }}
          />
          <TextField
            label={translate('channel.fields.base_url')}
            value={values.base_url}
            onChange={(event) => set('base_url', event.target.value)}
            helperText={translate(values.type === 8 ? 'channel.form.base_url_custom' : 'channel.form.base_url_help')}
            disabled={readOnly}
            fullWidth
            slotProps={{ htmlInput: { 'data-testid': 'channel-base_url' } }}
          />
          {isNew && (
            <FormControl disabled={readOnly}>
              <FormLabel>{translate('channel.form.key_mode')}</FormLabel>
              <RadioGroup
                row
                value={values.create_mode}
                onChange={(event) => set('create_mode', event.target.value as ChannelFormValues['create_mode'])}
              >
                <FormControlLabel value="single" control={<Radio />} label={translate('channel.form.mode_single')} />
                <FormControlLabel value="batch" control={<Radio />} label={translate('channel.form.mode_batch')} />
                <FormControlLabel
                  value="multi_to_single"
                  control={<Radio />}
                  label={translate('channel.form.mode_multi')}
                />
              </RadioGroup>
            </FormControl>
          )}
          <TextField
            label={translate('channel.fields.key')}
            value={values.key}
            onChange={(event) => set('key', event.target.value)}
            required={isNew}
            multiline={!isNew || values.create_mode !== 'single'}
            minRows={values.create_mode !== 'single' ? 3 : 1}
            placeholder={type?.key.hint ?? ''}
            helperText={translate(
              isNew
                ? values.create_mode === 'single'
                  ? 'channel.form.key_help'
                  : 'channel.form.key_help_multi'
                : 'channel.form.key_help_edit',
            )}
            disabled={readOnly}
            fullWidth
            slotProps={{ htmlInput: { 'data-testid': 'channel-key' } }}
          />
          {(!isNew || values.create_mode === 'multi_to_single') && (
            <Stack direction="row" spacing={2}>
              {!isNew && (
                <TextField
                  select
                  label={translate('channel.form.key_update')}
                  value={values.key_mode}
                  onChange={(event) => set('key_mode', event.target.value as ChannelFormValues['key_mode'])}
                  disabled={readOnly}
                  sx={{ minWidth: 200 }}
                >
                  <MenuItem value="replace">{translate('channel.form.key_replace')}</MenuItem>
                  <MenuItem value="append">{translate('channel.form.key_append')}</MenuItem>
                </TextField>
              )}
              <TextField
                select
                label={translate('channel.form.multi_key_mode')}
                value={values.multi_key_mode}
                onChange={(event) => set('multi_key_mode', event.target.value as ChannelFormValues['multi_key_mode'])}
                disabled={readOnly}
                sx={{ minWidth: 200 }}
              >
                <MenuItem value="random">{translate('channel.form.multi_random')}</MenuItem>
                <MenuItem value="polling">{translate('channel.form.multi_polling')}</MenuItem>
              </TextField>
            </Stack>
          )}
          {values.type === 1 && (
            <TextField
              label={translate('channel.fields.openai_organization')}
              value={values.openai_organization}
              onChange={(event) => set('openai_organization', event.target.value)}
              disabled={readOnly}
              fullWidth
            />
          )}
          {type?.other && (
            <TextField
              label={type.other.label[language]}
              placeholder={type.other.hint[language]}
              helperText={type.other.choices ? type.other.hint[language] : undefined}
              value={type.other.choices && values.other === '' ? (type.other.default ?? '') : values.other}
              onChange={(event) => set('other', event.target.value)}
              select={type.other.choices !== null}
              multiline={values.type === 41}
              disabled={readOnly}
              fullWidth
              slotProps={{ htmlInput: { 'data-testid': 'channel-other' } }}
            >
              {type.other.choices?.map((choice) => (
                <MenuItem key={choice} value={choice}>
                  {choice}
                </MenuItem>
              ))}
            </TextField>
          )}

          <Autocomplete
            multiple
            freeSolo
            options={modelOptions}
            value={values.models}
            onChange={(_event, models) => set('models', models as string[])}
            disabled={readOnly}
            disableCloseOnSelect
            limitTags={30}
            renderValue={(selected, getItemProps) =>
              selected.map((model, index) => {
                const { key, ...props } = getItemProps({ index });
                return <Chip key={key} size="small" label={model} {...props} />;
              })
            }
            renderInput={(params) => (
              <TextField
                {...params}
                label={translate('channel.fields.models')}
                required
                slotProps={{
                  ...params.slotProps,
                  htmlInput: { ...params.slotProps.htmlInput, 'data-testid': 'channel-models' },
                }}
              />
            )}
          />
          <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap', rowGap: 1 }}>
            <Button
              size="small"
              variant="outlined"
              disabled={readOnly || typeModels.length === 0}
              onClick={() => set('models', [...new Set([...values.models, ...typeModels])])}
            >
              {translate('channel.form.fill_related')}
            </Button>
            <Button
              size="small"
              variant="outlined"
              disabled={readOnly}
              onClick={() => set('models', [...new Set([...values.models, ...knownModels])])}
            >
              {translate('channel.form.fill_all')}
            </Button>
            <Button
              size="small"
              variant="outlined"
              disabled={readOnly || fetching}
              onClick={fetchModels}
              data-testid="channel-fetch-models"
            >
              {translate('channel.form.fetch_models')}
            </Button>
            <Button size="small" color="warning" disabled={readOnly} onClick={() => set('models', [])}>
              {translate('channel.form.clear_models')}
            </Button>
            <PrefillModels
              disabled={readOnly}
              onFill={(models) => set('models', [...new Set([...values.models, ...models])])}
            />
          </Stack>
          <Stack direction="row" spacing={1}>
            <TextField
              size="small"
              label={translate('channel.form.custom_models')}
              value={customModels}
              onChange={(event) => setCustomModels(event.target.value)}
              onKeyDown={(event) => {
                if (event.key === 'Enter') {
                  event.preventDefault();
                  addCustom();
                }
              }}
              disabled={readOnly}
              fullWidth
              slotProps={{ htmlInput: { 'data-testid': 'channel-custom-models' } }}
            />
            <Button variant="outlined" onClick={addCustom} disabled={readOnly} data-testid="channel-add-custom">
              {translate('channel.form.add_custom')}
            </Button>
          </Stack>
          <Autocomplete
            freeSolo
            options={values.models}
            value={values.test_model}
            onInputChange={(_event, value) => set('test_model', value)}
            disabled={readOnly}
            renderInput={(params) => (
              <TextField
                {...params}
                label={translate('channel.fields.test_model')}
                helperText={translate('channel.form.test_model_help')}
              />
            )}
          />
          {json(
            'model_mapping',
            'channel.fields.model_mapping',
            MAPPING_EXAMPLE,
            <Button
              size="small"
              disabled={readOnly}
              onClick={() => set('model_mapping', MAPPING_EXAMPLE)}
              sx={{ mt: 0.5 }}
            >
              {translate('channel.form.fill_template')}
            </Button>,
          )}
          <Autocomplete
            multiple
            freeSolo
            options={[...new Set([...groups, ...values.groups])]}
            value={values.groups}
            onChange={(_event, list) => set('groups', list as string[])}
            disabled={readOnly}
            renderInput={(params) => (
              <TextField
                {...params}
                label={translate('channel.fields.group')}
                slotProps={{
                  ...params.slotProps,
                  htmlInput: { ...params.slotProps.htmlInput, 'data-testid': 'channel-groups' },
                }}
              />
            )}
          />
          <Stack direction="row" spacing={2}>
            <TextField
              label={translate('channel.fields.tag')}
              value={values.tag}
              onChange={(event) => set('tag', event.target.value)}
              disabled={readOnly}
              fullWidth
              slotProps={{ htmlInput: { 'data-testid': 'channel-tag' } }}
            />
            <TextField
              label={translate('channel.fields.priority')}
              value={values.priority}
              onChange={(event) => set('priority', event.target.value)}
              type="number"
              disabled={readOnly}
              sx={{ width: 140 }}
              slotProps={{ htmlInput: { 'data-testid': 'channel-priority' } }}
            />
            <TextField
              label={translate('channel.fields.weight')}
              value={values.weight}
              onChange={(event) => set('weight', event.target.value)}
              type="number"
              disabled={readOnly}
              sx={{ width: 140 }}
              slotProps={{ htmlInput: { min: 0, 'data-testid': 'channel-weight' } }}
            />
          </Stack>
          <FormControlLabel
            control={
              <Switch
                checked={values.auto_ban}
                onChange={(event) => set('auto_ban', event.target.checked)}
                disabled={readOnly}
              />
            }
            label={translate('channel.fields.auto_ban')}
          />
          {json('status_code_mapping', 'channel.form.status_code_mapping', '{\n  "400": "500"\n}')}
          {json('param_override', 'channel.form.param_override', '{\n  "temperature": 0\n}')}
          {json('header_override', 'channel.form.header_override', '{\n  "User-Agent": "tollgate"\n}')}
          {json('setting', 'channel.form.setting', '{\n  "proxy": "",\n  "system_prompt": ""\n}')}
          <FormControlLabel
            control={
              <Switch
                checked={passThroughOf(values.setting) === true}
                onChange={(event) => set('setting', withPassThrough(values.setting, event.target.checked))}
                disabled={readOnly || passThroughOf(values.setting) === undefined}
                slotProps={{ input: { 'data-testid': 'channel-pass-through' } as object }}
              />
            }
            label={translate('channel.form.pass_through')}
          />
          <Typography variant="caption" color="text.secondary" sx={{ mt: -1.5, px: 1.75 }}>
            {translate('channel.form.pass_through_help')}
          </Typography>
          <TextField
            label={translate('channel.fields.max_input_tokens')}
            value={values.max_input_tokens}
            onChange={(event) => set('max_input_tokens', event.target.value)}
            type="number"
            helperText={translate('channel.form.max_input_tokens_help')}
            disabled={readOnly}
            fullWidth
          />
          <TextField
            label={translate('channel.fields.remark')}
            value={values.remark}
            onChange={(event) => set('remark', event.target.value)}
            multiline
            disabled={readOnly}
            fullWidth
          />
        </Stack>
      )}
      <Box sx={{ display: 'flex', gap: 1, justifyContent: 'flex-end', p: 2, borderTop: 1, borderColor: 'divider' }}>
        <Button onClick={onClose}>{translate('common.cancel')}</Button>
        <Button
          variant="contained"
          onClick={save}
          disabled={saving || loading || readOnly}
          data-testid="channel-submit"
        >
          {translate('channel.form.submit')}
        </Button>
      </Box>
      {dialog}
    </Drawer>
  );
}
