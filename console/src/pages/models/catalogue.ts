import { api } from '../../providers/http.ts';

/** A model entry as GET /api/models/ answers it. */
export interface ModelEntry {
  id: number;
  model_name: string;
  description: string;
  icon: string;
  tags: string;
  vendor_id: number;
  endpoints: string;
  status: number;
  sync_official: number;
  name_rule: number;
  enable_groups: string[];
  matched_count?: number;
}

export interface Vendor {
  id: number;
  name: string;
  description: string;
  icon: string;
  status: number;
}

export interface Page<T> {
  items: T[];
  total: number;
}

/** GET /api/models/sync_upstream/preview. */
export interface SyncPreview {
  missing: string[];
  conflicts: Array<{ model_name: string; fields: Array<{ field: string; local: unknown; upstream: unknown }> }>;
  source: { url: string };
}

export interface Missing {
  all: string[];
  metadata: Set<string>;
  price: Set<string>;
}

export interface SyncResult {
  created_models: number;
  created_vendors: number;
  updated_models: number;
  updated_prices: number;
}

/** The editable fields of a model entry (POST and PUT /api/models/). */
export type ModelDraft = Omit<ModelEntry, 'id' | 'enable_groups' | 'matched_count'> & { id?: number };
export type VendorDraft = Omit<Vendor, 'id'> & { id?: number };

export const emptyModel = (model_name = ''): ModelDraft => ({
  model_name,
  description: '',
  icon: '',
  tags: '',
  vendor_id: 0,
  endpoints: '',
  status: 1,
  sync_official: 1,
  name_rule: 0,
});

export const emptyVendor = (): VendorDraft => ({ name: '', description: '', icon: '', status: 1 });

export const NAME_RULES = ['exact', 'prefix', 'contains', 'suffix'] as const;

export const catalogueApi = {
  models: (keyword: string, page: number, pageSize: number) =>
    api.get<Page<ModelEntry>>('/api/models/search', { query: { keyword, p: page, page_size: pageSize } }),
  saveModel: (draft: ModelDraft) =>
    draft.id ? api.put<ModelEntry>('/api/models/', draft) : api.post<ModelEntry>('/api/models/', draft),
  deleteModel: (id: number) => api.delete(`/api/models/${id}`),
  vendors: () => api.get<Page<Vendor>>('/api/vendors/', { query: { page_size: 100 } }),
  saveVendor: (draft: VendorDraft) =>
    draft.id ? api.put<Vendor>('/api/vendors/', draft) : api.post<Vendor>('/api/vendors/', draft),
  deleteVendor: (id: number) => api.delete(`/api/vendors/${id}`),
  /** Served models lacking metadata, a price, or both (the answer adds the two lists beside `data`). */
  missing: async (): Promise<Missing> => {
    const answer = (await api.request<string[]>('GET', '/api/models/missing')) as unknown as {
      data: string[];
      missing_metadata: string[];
      missing_price: string[];
    };
    return { all: answer.data, metadata: new Set(answer.missing_metadata), price: new Set(answer.missing_price) };
  },
  preview: () => api.get<SyncPreview>('/api/models/sync_upstream/preview'),
  apply: (create: string[], overwrite: Array<{ model_name: string; fields: string[] }>) =>
    api.post<SyncResult>('/api/models/sync_upstream', { create, overwrite }),
};
