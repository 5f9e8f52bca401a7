import simpleRestProvider from 'ra-data-simple-rest';
import { type DataProvider, fetchUtils, HttpError } from 'react-admin';
import { withStepUp } from '../layout/StepUpDialog.tsx';
import { gatewayHeaders, genericHttpMessage } from './http.ts';

/**
 * Sends the session cookie and the gateway headers (user id, no caching, language) with every /rest call,
 * and replaces the message of 429/500/405 answers with the generic ones of spec doc 1 §8. A 401 reaches
 * `authProvider.checkError`, which sends the browser to /login?expired=true. A sensitive change (deleting a
 * channel, another user's quota) asks a two-factor user for a code first (withStepUp).
 */
export const restClient = (url: string, options: fetchUtils.Options = {}) => withStepUp(() => restCall(url, options));

const restCall = async (url: string, options: fetchUtils.Options) => {
  const headers = gatewayHeaders(options.headers);
  if (!headers.has('Accept')) headers.set('Accept', 'application/json');
  try {
    return await fetchUtils.fetchJson(url, { ...options, headers, credentials: 'include' });
  } catch (error) {
    if (error instanceof HttpError) {
      const generic = genericHttpMessage(error.status);
      if (generic) throw new HttpError(generic, error.status, error.body);
    }
    throw error;
  }
};

/** The console's single data provider: react-admin's simple-REST dialect on the gateway's /rest. */
export const dataProvider: DataProvider = simpleRestProvider('/rest', restClient);
