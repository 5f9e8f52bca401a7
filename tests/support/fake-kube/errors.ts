import type { ResourceType } from './resources.ts';

/** A `meta/v1 Status` as the API server writes it for a failed request (and for a successful delete). */
export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: Array<{ reason?: string; message: string; field?: string }>;
    retryAfterSeconds?: number;
  };
  code: number;
}

/** The `reason` Kubernetes pairs with each HTTP status when nothing more specific applies. */
export const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** An error the fake answers as a Kubernetes `Status` with this HTTP code. */
export class KubeApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: KubeStatus['details'];

  constructor(code: number, message: string, reason?: string, details?: KubeStatus['details']) {
    super(message);
    this.code = code;
    this.reason = reason ?? REASONS[code] ?? 'Unknown';
    this.details = details;
  }

  toStatus(): KubeStatus {
    return statusObject(this.code, this.message, this.reason, this.details);
  }
}

export function statusObject(
  code: number,
  message: string,
  reason: string | undefined = REASONS[code],
  details?: KubeStatus['details'],
): KubeStatus {
  const status: KubeStatus = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code };
  if (reason) status.reason = reason;
  if (details) status.details = details;
  return status;
}

/** field.ErrorType strings and the cause type Kubernetes reports for each. */
const CAUSE_TYPES: Array<[string, string]> = [
  ['Required value', 'FieldValueRequired'],
  ['Forbidden', 'FieldValueForbidden'],
  ['Unsupported value', 'FieldValueNotSupported'],
  ['Duplicate value', 'FieldValueDuplicate'],
  ['Too many', 'FieldValueTooMany'],
  ['Too long', 'FieldValueTooLong'],
];

function gr(type: ResourceType, name: string) {
  return { name, group: type.group, kind: type.plural };
}

export const errors = {
  notFound: (type: ResourceType, name: string) =>
    new KubeApiError(404, `${type.groupResource} "${name}" not found`, 'NotFound', gr(type, name)),
  noSuchPath: () => new KubeApiError(404, 'the server could not find the requested resource', 'NotFound', {}),
  alreadyExists: (type: ResourceType, name: string) =>
    new KubeApiError(409, `${type.groupResource} "${name}" already exists`, 'AlreadyExists', gr(type, name)),
  conflict: (type: ResourceType, name: string, why: string) =>
    new KubeApiError(409, `Operation cannot be fulfilled on ${type.groupResource} "${name}": ${why}`, 'Conflict', {
      ...gr(type, name),
    }),
  /** A DELETE precondition that failed: kube-apiserver names the kind here, not the resource (`Channel.tollgate.dev`). */
  preconditionFailed: (type: ResourceType, name: string, why: string) =>
    new KubeApiError(
      409,
      `Operation cannot be fulfilled on ${type.group ? `${type.kind}.${type.group}` : type.kind} "${name}": ${why}`,
      'Conflict',
      { name, group: type.group, kind: type.kind },
    ),
  /** RBAC or admission refused the request; `resource` is the plural (without subresource), as in the real details. */
  forbidden: (group: string, resource: string, name: string | undefined, why: string) =>
    new KubeApiError(
      403,
      `${group ? `${resource}.${group}` : resource}${name ? ` "${name}"` : ''} is forbidden: ${why}`,
      'Forbidden',
      name ? { name, group, kind: resource } : { group, kind: resource },
    ),
  staleResourceVersion: (type: ResourceType, name: string) =>
    errors.conflict(
      type,
      name,
      'the object has been modified; please apply your changes to the latest version and try again',
    ),
  /**
   * 422 Invalid. Validation names the kind (`Channel.tollgate.dev "x" is invalid`); checks the generic registry
   * makes itself, such as a missing resourceVersion, name the resource (`channels.tollgate.dev`, details.kind
   * `channels`), as kube-apiserver does.
   */
  invalid: (type: ResourceType, name: string, problems: string[], naming: 'kind' | 'resource' = 'kind') => {
    // A cause carries the field apart and the message without it, as field.Error's ErrorBody().
    const causes = problems.map((problem) => {
      const field = /^([\w.[\]/-]+): /.exec(problem)?.[1];
      const message = field ? problem.slice(field.length + 2) : problem;
      const reason = CAUSE_TYPES.find(([prefix]) => message.startsWith(prefix))?.[1] ?? 'FieldValueInvalid';
      return field ? { reason, message, field } : { reason, message };
    });
    const list = problems.length === 1 ? problems[0] : `[${problems.join(', ')}]`;
    const kind = naming === 'kind' ? type.kind : type.plural;
    const qualified = type.group ? `${kind}.${type.group}` : kind;
    return new KubeApiError(422, `${qualified} "${name}" is invalid: ${list}`, 'Invalid', {
      name,
      group: type.group,
      kind,
      causes,
    });
  },
  badRequest: (message: string) => new KubeApiError(400, message, 'BadRequest'),
  expired: (message: string) => new KubeApiError(410, message, 'Expired'),
  methodNotAllowed: (message = 'the server does not allow this method on the requested resource') =>
    new KubeApiError(405, message, 'MethodNotAllowed'),
  unsupportedMediaType: (accepted: string[]) =>
    new KubeApiError(
      415,
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
      'UnsupportedMediaType',
    ),
};
