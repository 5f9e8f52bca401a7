import Check from '@mui/icons-material/Check';
import Close from '@mui/icons-material/Close';
import ContentCopy from '@mui/icons-material/ContentCopy';
import HelpOutline from '@mui/icons-material/HelpOutlineOutlined';
import Search from '@mui/icons-material/Search';
import {
  Alert,
  Box,
  Button,
  Card,
  Checkbox,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormControlLabel,
  IconButton,
  InputAdornment,
  MenuItem,
  Stack,
  Switch,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import { useEffect, useMemo, useRef, useState } from 'react';
import { Title, useNotify, useTranslate } from 'react-admin';
import { api, errorMessage } from '../../providers/http.ts';
import { useSessionUser } from '../../providers/session.ts';
import { useStatus } from '../../status/StatusContext.tsx';
import { useClipboard } from './clipboard.tsx';
import {
  displayPrice,
  matchesModel,
  type PricingAnswer,
  type PricingItem,
  type PricingVendor,
  usdPrices,
} from './pricing.ts';

/** The public pricing page (spec doc 3 §2 "Pricing page"). */
export function PricingPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const user = useSessionUser();
  const { status } = useStatus();
  const { copy, dialog } = useClipboard();
  const [answer, setAnswer] = useState<PricingAnswer | undefined>();
  const [input, setInput] = useState('');
  const [query, setQuery] = useState('');
  const composing = useRef(false);
  const [group, setGroup] = useState<string | undefined>();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [showRatio, setShowRatio] = useState(false);
  const [recharge, setRecharge] = useState(false);
  const [currency, setCurrency] = useState<'USD' | 'CNY'>('USD');
  const [help, setHelp] = useState(false);

  useEffect(() => {
    let live = true;
    api
      .request<PricingItem[]>('GET', '/api/pricing', { expireOn401: false })
      .then((envelope) => live && setAnswer(envelope as PricingAnswer))
      .catch((error) => notify(errorMessage(error), { type: 'error' }));
    return () => {
      live = false;
    };
  }, [notify]);

  const ratios = answer?.group_ratio ?? {};
  const defaultGroup =
    user?.group && user.group in ratios ? user.group : 'default' in ratios ? 'default' : Object.keys(ratios)[0];
  const viewed = group ?? defaultGroup ?? 'default';
  const viewedRatio = ratios[viewed] ?? 1;
  const items = useMemo(() => (answer?.data ?? []).filter((item) => matchesModel(item, query)), [answer, query]);
  const allSelected = items.length > 0 && items.every((item) => selected.has(item.model_name));
  const price = (usd: number) => displayPrice(usd, { recharge, currency }, status);

  const toggle = (name: string) => {
    const next = new Set(selected);
    if (next.has(name)) next.delete(name);
    else next.add(name);
    setSelected(next);
  };
  const switchGroup = (name: string) => {
    setGroup(name);
    notify('pricing.group_switched', { type: 'info', messageArgs: { group: name, ratio: ratios[name] ?? 1 } });
  };

  return (
    <Box data-testid="pricing-page" sx={{ width: '100%', minWidth: 0, contain: 'inline-size' }}>
      <Title title={translate('pricing.title')} />
      {user ? (
        <Alert severity="info" sx={{ mb: 1 }} data-testid="pricing-banner">
          {translate('pricing.banner_user', {
            group: defaultGroup ?? user.group,
            ratio: ratios[defaultGroup ?? ''] ?? 1,
          })}
        </Alert>
      ) : (
        <Alert severity="warning" sx={{ mb: 1 }} data-testid="pricing-banner">
          {translate('pricing.banner_visitor')}
        </Alert>
      )}
      <Card sx={{ p: 1 }}>
        <Stack direction="row" spacing={1} useFlexGap sx={{ flexWrap: 'wrap', alignItems: 'center', mb: 1 }}>
          <TextField
            size="small"
            placeholder={translate('pricing.search')}
            value={input}
            onChange={(event) => {
              setInput(event.target.value);
              if (!composing.current) setQuery(event.target.value);
            }}
            onCompositionStart={() => {
              composing.current = true;
            }}
            onCompositionEnd={(event) => {
              composing.current = false;
              setQuery((event.target as HTMLInputElement).value);
            }}
            slotProps={{
              input: {
                startAdornment: (
                  <InputAdornment position="start">
                    <Search fontSize="small" />
                  </InputAdornment>
                ),
              },
              htmlInput: { 'data-testid': 'pricing-search' },
            }}
            fullWidth={false}
            sx={{ width: 260 }}
          />
          <Button
            variant="outlined"
            startIcon={<ContentCopy />}
            disabled={selected.size === 0}
            onClick={() => void copy([...selected].join(','))}
            data-testid="pricing-copy-selected"
          >
            {translate('pricing.copy_selected')}
          </Button>
          <FormControlLabel
            control={<Switch checked={showRatio} onChange={(event) => setShowRatio(event.target.checked)} />}
            label={translate('pricing.show_ratio')}
          />
          {status.enable_online_topup && (
            <>
              <FormControlLabel
                control={<Switch checked={recharge} onChange={(event) => setRecharge(event.target.checked)} />}
                label={translate('pricing.recharge_price')}
              />
              {recharge && (
                <TextField
                  select
                  size="small"
                  value={currency}
                  onChange={(event) => setCurrency(event.target.value as 'USD' | 'CNY')}
                >
                  <MenuItem value="USD">USD</MenuItem>
                  <MenuItem value="CNY">CNY</MenuItem>
                </TextField>
              )}
            </>
          )}
          <Box sx={{ flex: 1 }} />
          <Chip
            color="primary"
            variant="outlined"
            label={translate('pricing.viewing', { group: viewed, ratio: viewedRatio })}
          />
          <Tooltip title={translate('pricing.help')}>
            <IconButton onClick={() => setHelp(true)} data-testid="pricing-help">
              <HelpOutline />
            </IconButton>
          </Tooltip>
        </Stack>
        <TableContainer>
          <Table size="small" data-testid="pricing-table">
            <TableHead>
              <TableRow>
                <TableCell padding="checkbox">
                  <Checkbox
                    checked={allSelected}
                    indeterminate={!allSelected && items.some((item) => selected.has(item.model_name))}
                    onChange={() =>
                      setSelected(allSelected ? new Set() : new Set(items.map((item) => item.model_name)))
                    }
                  />
                </TableCell>
                <TableCell>{translate('pricing.fields.available')}</TableCell>
                <TableCell>{translate('pricing.fields.model')}</TableCell>
                <TableCell>{translate('pricing.fields.billing')}</TableCell>
                <TableCell>{translate('pricing.fields.groups')}</TableCell>
                {showRatio && <TableCell>{translate('pricing.fields.ratio')}</TableCell>}
                <TableCell>{translate('pricing.fields.price')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {items.map((item) => {
                const prices = usdPrices(item, viewedRatio);
                const available = item.enable_groups.includes(viewed);
                return (
                  <TableRow key={item.model_name} hover data-testid="pricing-row" data-model={item.model_name}>
                    <TableCell padding="checkbox">
                      <Checkbox checked={selected.has(item.model_name)} onChange={() => toggle(item.model_name)} />
                    </TableCell>
                    <TableCell>
                      {available ? (
                        <Check color="success" fontSize="small" />
                      ) : (
                        <Close color="error" fontSize="small" />
                      )}
                    </TableCell>
                    <TableCell>
                      <Chip
                        size="small"
                        variant="outlined"
                        label={item.model_name}
                        onClick={() => void copy(item.model_name)}
                      />
                      <ModelMetadata item={item} vendors={answer?.vendors ?? []} />
                    </TableCell>
                    <TableCell>
                      {translate(
                        item.billing_mode === 'tiered_expr'
                          ? 'pricing.tiered'
                          : item.quota_type === 1
                            ? 'pricing.per_call'
                            : 'pricing.per_usage',
                      )}
                    </TableCell>
                    <TableCell>
                      <Stack direction="row" spacing={0.5} useFlexGap sx={{ flexWrap: 'wrap' }}>
                        {item.enable_groups.map((name) => (
                          <Chip
                            key={name}
                            size="small"
                            color={name === viewed ? 'primary' : 'default'}
                            label={name}
                            onClick={() => switchGroup(name)}
                          />
                        ))}
                      </Stack>
                    </TableCell>
                    {showRatio && (
                      <TableCell>
                        <Typography variant="body2">
                          {item.quota_type === 1 || item.billing_mode === 'tiered_expr'
                            ? translate('pricing.ratio_na')
                            : translate('pricing.model_ratio', { value: item.model_ratio })}
                        </Typography>
                        {item.quota_type !== 1 && item.billing_mode !== 'tiered_expr' && (
                          <Typography variant="body2">
                            {translate('pricing.completion_ratio', { value: item.completion_ratio })}
                          </Typography>
                        )}
                        <Typography variant="body2">
                          {translate('pricing.group_ratio', { value: viewedRatio })}
                        </Typography>
                      </TableCell>
                    )}
                    <TableCell data-testid="pricing-price">
                      {item.billing_mode === 'tiered_expr' ? (
                        <TieredPrice item={item} groupRatio={viewedRatio} />
                      ) : item.quota_type === 1 ? (
                        <Typography variant="body2">
                          {translate('pricing.call_price', { price: price(prices.call) })}
                        </Typography>
                      ) : (
                        <>
                          <Typography variant="body2">
                            {translate('pricing.prompt_price', { price: price(prices.prompt) })}
                          </Typography>
                          <Typography variant="body2">
                            {translate('pricing.completion_price', { price: price(prices.completion) })}
                          </Typography>
                        </>
                      )}
                    </TableCell>
                  </TableRow>
                );
              })}
              {answer && items.length === 0 && (
                <TableRow>
                  <TableCell colSpan={showRatio ? 7 : 6}>
                    <Typography color="text.secondary">{translate('pricing.no_models')}</Typography>
                  </TableCell>
                </TableRow>
              )}
            </TableBody>
          </Table>
        </TableContainer>
      </Card>
      <Dialog open={help} onClose={() => setHelp(false)} maxWidth="sm" fullWidth>
        <DialogTitle>{translate('pricing.help')}</DialogTitle>
        <DialogContent>
          <Typography sx={{ mb: 1 }}>{translate('pricing.formula')}</Typography>
          <Typography color="text.secondary">{translate('pricing.formula_note')}</Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setHelp(false)}>{translate('common.close')}</Button>
        </DialogActions>
      </Dialog>
      {dialog}
    </Box>
  );
}

/** An expression-priced model: its tiers and the expression itself, whose coefficients are USD per 1M tokens. */
function TieredPrice({ item, groupRatio }: { item: PricingItem; groupRatio: number }) {
  const translate = useTranslate();
  const tiers = item.billing_tiers ?? [];
  return (
    <Stack spacing={0.5} data-testid="pricing-tiered">
      {tiers.length > 0 && (
        <Typography variant="body2">{translate('pricing.tiers', { tiers: tiers.join(', ') })}</Typography>
      )}
      <Typography
        variant="body2"
        component="code"
        sx={{ fontFamily: 'monospace', whiteSpace: 'pre-wrap', wordBreak: 'break-word', maxWidth: 480 }}
      >
        {item.billing_expr}
      </Typography>
      <Typography variant="caption" color="text.secondary">
        {translate('pricing.expression_note', { ratio: groupRatio })}
      </Typography>
    </Stack>
  );
}

/** The catalogue entry's vendor, tags and description under a model's chip (none when it has no entry). */
function ModelMetadata({ item, vendors }: { item: PricingItem; vendors: PricingVendor[] }) {
  const vendor = vendors.find((v) => v.id === item.vendor_id);
  const tags = (item.tags ?? '')
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean);
  if (!vendor && tags.length === 0 && !item.description) return null;
  return (
    <Box sx={{ mt: 0.5 }} data-testid="pricing-model-metadata">
      {vendor && (
        <Typography variant="caption" sx={{ display: 'block', fontWeight: 500 }}>
          {vendor.name}
        </Typography>
      )}
      {item.description && (
        <Typography variant="caption" color="text.secondary" sx={{ display: 'block' }}>
          {item.description}
        </Typography>
      )}
      {tags.map((tag) => (
        <Chip key={tag} size="small" label={tag} sx={{ mr: 0.5, mt: 0.5, height: 18 }} />
      ))}
    </Box>
  );
}
