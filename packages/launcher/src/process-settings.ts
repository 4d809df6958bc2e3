import type { z } from 'zod';
import { bootstrapEnvSchema } from '@switchyard/control-plane';
import { migrateSettings, serviceNames, standaloneSettings, type ServiceName } from '@switchyard/runtime';
import { allInOneSettings } from './all-in-one.ts';
import { consoleSettings } from './console-server.ts';
import { allServices } from './services.ts';

/** A kind of process, as `switchyard <command>` starts it. */
export type ProcessName = ServiceName | 'all-in-one' | 'console' | 'migrate' | 'bootstrap';

export interface ProcessSettings {
  service: ProcessName;
  /** The environment variables the process acts on, each with its default and description. */
  schema: z.ZodObject;
}

/** What each kind of process reads from its environment, in the configuration table's order. */
export const processSettings: ProcessSettings[] = [
  ...serviceNames.map((name) => {
    const definition = allServices.find((service) => service.name === name);
    if (!definition) throw new Error(`no service definition named ${name}`);
    return { service: name, schema: standaloneSettings(definition) };
  }),
  { service: 'all-in-one', schema: allInOneSettings },
  { service: 'console', schema: consoleSettings },
  { service: 'migrate', schema: migrateSettings },
  { service: 'bootstrap', schema: bootstrapEnvSchema },
];
