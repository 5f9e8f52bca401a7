import Add from '@mui/icons-material/Add';
import CloudSync from '@mui/icons-material/CloudSync';
import Delete from '@mui/icons-material/Delete';
import Edit from '@mui/icons-material/Edit';
import ReportProblem from '@mui/icons-material/ReportProblem';
import {
  Box,
  Button,
  Chip,
  IconButton,
  Stack,
  Tab,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TablePagination,
  TableRow,
  Tabs,
  TextField,
  Typography,
} from '@mui/material';
import { useCallback, useEffect, useState } from 'react';
import { Title, useNotify, useTranslate } from 'react-admin';
import { errorMessage } from '../../providers/http.ts';
import { useConfirm } from '../../resources/admin-shared.tsx';
import {
  catalogueApi,
  emptyModel,
  emptyVendor,
  type ModelDraft,
  type ModelEntry,
  NAME_RULES,
  type Page,
  type Vendor,
  type VendorDraft,
} from './catalogue.ts';
import { ModelDialog, VendorDialog } from './EntryDialogs.tsx';
import { MissingDialog, SyncDialog } from './UpstreamDialogs.tsx';

/** Administrators' model catalogue: model entries and vendors, missing models, upstream sync (issue 19). */
export function ModelsPage() {
  const translate = useTranslate();
  const notify = useNotify();
  const { ask, dialog } = useConfirm();
  const [tab, setTab] = useState<'models' | 'vendors'>('models');
  const [keyword, setKeyword] = useState('');
  const [page, setPage] = useState(0);
  const [pageSize, setPageSize] = useState(10);
  const [models, setModels] = useState<Page<ModelEntry>>({ items: [], total: 0 });
  const [vendors, setVendors] = useState<Page<Vendor>>({ items: [], total: 0 });
  const [modelDraft, setModelDraft] = useState<ModelDraft>();
  const [vendorDraft, setVendorDraft] = useState<VendorDraft>();
  const [missingOpen, setMissingOpen] = useState(false);
  const [syncOpen, setSyncOpen] = useState(false);

  const load = useCallback(async () => {
    try {
      const [m, v] = await Promise.all([catalogueApi.models(keyword, page + 1, pageSize), catalogueApi.vendors()]);
      setModels(m);
      setVendors(v);
    } catch (error) {
      notify(errorMessage(error), { type: 'error' });
    }
  }, [keyword, page, pageSize, notify]);
  useEffect(() => {
    void load();
  }, [load]);

  const vendorName = (id: number) => vendors.items.find((v) => v.id === id)?.name ?? '';
  const remove = (kind: 'model' | 'vendor', id: number, name: string) =>
    ask({
      title: 'models.delete_title',
      content: kind === 'model' ? 'models.delete_model_confirm' : 'models.delete_vendor_confirm',
      values: { name },
      danger: true,
      onConfirm: async () => {
        try {
          await (kind === 'model' ? catalogueApi.deleteModel(id) : catalogueApi.deleteVendor(id));
          notify(translate('models.deleted'), { type: 'success' });
          await load();
        } catch (error) {
          notify(errorMessage(error), { type: 'error' });
        }
      },
    });

  return (
    <Box sx={{ p: 2 }} data-testid="models-page">
      <Title title={translate('models.title')} />
      <Tabs value={tab} onChange={(_e, value) => setTab(value)} sx={{ mb: 2 }}>
        <Tab value="models" label={translate('models.tab_models')} data-testid="tab-models" />
        <Tab value="vendors" label={translate('models.tab_vendors')} data-testid="tab-vendors" />
      </Tabs>
      {tab === 'models' ? (
        <>
          <Stack direction="row" spacing={1} useFlexGap sx={{ flexWrap: 'wrap', mb: 2 }}>
            <TextField
              size="small"
              label={translate('models.search')}
              value={keyword}
              onChange={(e) => {
                setKeyword(e.target.value);
                setPage(0);
              }}
              slotProps={{ htmlInput: { 'data-testid': 'models-search' } }}
            />
            <Button
              startIcon={<Add />}
              variant="contained"
              onClick={() => setModelDraft(emptyModel())}
              data-testid="add-model"
            >
              {translate('models.add_model')}
            </Button>
            <Button startIcon={<ReportProblem />} onClick={() => setMissingOpen(true)} data-testid="open-missing">
              {translate('models.missing_title')}
            </Button>
            <Button startIcon={<CloudSync />} onClick={() => setSyncOpen(true)} data-testid="open-sync">
              {translate('models.sync_title')}
            </Button>
          </Stack>
          <Table size="small" data-testid="models-table">
            <TableHead>
              <TableRow>
                <TableCell>{translate('models.fields.model_name')}</TableCell>
                <TableCell>{translate('models.fields.vendor')}</TableCell>
                <TableCell>{translate('models.fields.description')}</TableCell>
                <TableCell>{translate('models.fields.tags')}</TableCell>
                <TableCell>{translate('models.fields.groups')}</TableCell>
                <TableCell>{translate('models.fields.enabled')}</TableCell>
                <TableCell />
              </TableRow>
            </TableHead>
            <TableBody>
              {models.items.map((model) => (
                <TableRow key={model.id} data-testid={`model-row-${model.model_name}`}>
                  <TableCell>
                    {model.model_name}
                    {model.name_rule > 0 && (
                      <Typography variant="caption" sx={{ display: 'block' }}>
                        {translate(`models.name_rules.${NAME_RULES[model.name_rule]}`)} · {model.matched_count ?? 0}
                      </Typography>
                    )}
                  </TableCell>
                  <TableCell>{vendorName(model.vendor_id)}</TableCell>
                  <TableCell>{model.description}</TableCell>
                  <TableCell>
                    {model.tags
                      .split(',')
                      .filter(Boolean)
                      .map((tag) => (
                        <Chip key={tag} size="small" label={tag.trim()} sx={{ mr: 0.5 }} />
                      ))}
                  </TableCell>
                  <TableCell>{model.enable_groups.join(', ')}</TableCell>
                  <TableCell>{translate(model.status === 1 ? 'models.on' : 'models.off')}</TableCell>
                  <TableCell align="right">
                    <IconButton aria-label={translate('models.edit_model')} onClick={() => setModelDraft({ ...model })}>
                      <Edit fontSize="small" />
                    </IconButton>
                    <IconButton
                      aria-label={translate('models.delete_title')}
                      onClick={() => remove('model', model.id, model.model_name)}
                      data-testid={`delete-model-${model.model_name}`}
                    >
                      <Delete fontSize="small" />
                    </IconButton>
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
          <TablePagination
            component="div"
            count={models.total}
            page={page}
            rowsPerPage={pageSize}
            rowsPerPageOptions={[10, 20, 50, 100]}
            labelRowsPerPage={translate('ra.navigation.page_rows_per_page')}
            labelDisplayedRows={({ from, to, count }) =>
              translate('ra.navigation.page_range_info', { offsetBegin: from, offsetEnd: to, total: count })
            }
            onPageChange={(_e, next) => setPage(next)}
            onRowsPerPageChange={(e) => {
              setPageSize(Number(e.target.value));
              setPage(0);
            }}
          />
        </>
      ) : (
        <>
          <Button
            startIcon={<Add />}
            variant="contained"
            sx={{ mb: 2 }}
            onClick={() => setVendorDraft(emptyVendor())}
            data-testid="add-vendor"
          >
            {translate('models.add_vendor')}
          </Button>
          {vendors.total > vendors.items.length && (
            <Typography variant="body2">
              {translate('models.vendors_shown', { shown: vendors.items.length, total: vendors.total })}
            </Typography>
          )}
          <Table size="small" data-testid="vendors-table">
            <TableHead>
              <TableRow>
                <TableCell>{translate('models.fields.vendor_name')}</TableCell>
                <TableCell>{translate('models.fields.description')}</TableCell>
                <TableCell>{translate('models.fields.icon')}</TableCell>
                <TableCell>{translate('models.fields.enabled')}</TableCell>
                <TableCell />
              </TableRow>
            </TableHead>
            <TableBody>
              {vendors.items.map((vendor) => (
                <TableRow key={vendor.id} data-testid={`vendor-row-${vendor.name}`}>
                  <TableCell>{vendor.name}</TableCell>
                  <TableCell>{vendor.description}</TableCell>
                  <TableCell>{vendor.icon}</TableCell>
                  <TableCell>{translate(vendor.status === 1 ? 'models.on' : 'models.off')}</TableCell>
                  <TableCell align="right">
                    <IconButton
                      aria-label={translate('models.edit_vendor')}
                      onClick={() => setVendorDraft({ ...vendor })}
                    >
                      <Edit fontSize="small" />
                    </IconButton>
                    <IconButton
                      aria-label={translate('models.delete_title')}
                      onClick={() => remove('vendor', vendor.id, vendor.name)}
                      data-testid={`delete-vendor-${vendor.name}`}
                    >
                      <Delete fontSize="small" />
                    </IconButton>
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </>
      )}
      <ModelDialog
        draft={modelDraft}
        vendors={vendors.items}
        onClose={(saved) => {
          setModelDraft(undefined);
          if (saved) void load();
        }}
      />
      <VendorDialog
        draft={vendorDraft}
        onClose={(saved) => {
          setVendorDraft(undefined);
          if (saved) void load();
        }}
      />
      <MissingDialog
        open={missingOpen}
        onClose={() => setMissingOpen(false)}
        onCreate={(name) => {
          setMissingOpen(false);
          setModelDraft(emptyModel(name));
        }}
      />
      <SyncDialog
        open={syncOpen}
        onClose={(applied) => {
          setSyncOpen(false);
          if (applied) void load();
        }}
      />
      {dialog}
    </Box>
  );
}
