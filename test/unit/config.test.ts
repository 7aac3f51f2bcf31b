import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('configuration', () => {
  it('has zero-configuration defaults', () => {
    const result = loadConfig({});
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config).toMatchObject({
      PORT: 8787,
      HOST: '127.0.0.1',
      DATABASE_URL: 'sqlite:./data/gatehouse.sqlite',
      LOG_LEVEL: 'info',
      BODY_LIMIT_BYTES: 1048576,
    });
    expect(result.config.GATEWAY_BOOTSTRAP_API_KEY).toBeUndefined();
  });

  it('reports every problem at once', () => {
    const result = loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud', GATEWAY_SECRET_KEY: 'short', GATEWAY_BOOTSTRAP_API_KEY: 'tiny' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toHaveLength(5);
    expect(result.problems.map((p) => p.split(':')[0]).sort()).toEqual(['DATABASE_URL', 'GATEWAY_BOOTSTRAP_API_KEY', 'GATEWAY_SECRET_KEY', 'LOG_LEVEL', 'PORT']);
  });

  it('treats empty variables as unset', () => {
    const result = loadConfig({ PORT: '', GATEWAY_BOOTSTRAP_API_KEY: '' });
    expect(result.ok && result.config.PORT).toBe(8787);
  });
});
