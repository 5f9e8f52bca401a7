import type { TestProject } from 'vitest/node';
import { describeServices, resolveServices } from './services.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string | undefined;
    redisUrl: string | undefined;
  }
}

export default async function setup(project: TestProject) {
  const services = await resolveServices();
  console.log(describeServices(services));
  project.provide('databaseUrl', services.databaseUrl);
  project.provide('redisUrl', services.redisUrl);
  return services.stop;
}
