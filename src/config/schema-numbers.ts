/** The number schemas the sections of `kloop.yaml` share (src/config/config.ts). */
import { z } from 'zod';

export const nonNegative = z.number().min(0);
export const count = (minimum: number) => z.int().min(minimum);
