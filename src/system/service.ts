// Health and feature reporting: each capability says itself whether it works here.
import { readFileSync } from 'node:fs';
import { scriptsWithoutFonts } from '../../export/fonts';
import type { Deps } from '../context';
import { mailConfigured } from '../mail/transport';

/** The repository's package.json: two folders up from this file, three from its build in dist/. */
function readPackageJson(): { version: string } {
  const built = import.meta.url.includes('/dist/src/');
  return JSON.parse(readFileSync(new URL(built ? '../../../package.json' : '../../package.json', import.meta.url), 'utf8')) as { version: string };
}
export const serverVersion = readPackageJson().version;

export type CheckState = 'ok' | 'error' | 'unavailable' | 'disabled';

async function capabilityState(deps: Deps, name: keyof Deps['capabilities']): Promise<CheckState> {
  const capability = deps.capabilities[name];
  if (!capability) return 'disabled';
  try {
    return (await capability.available()) ? 'ok' : 'unavailable';
  } catch {
    return 'error';
  }
}

const pingStatements = new WeakMap<Deps['sqlite'], { get(): unknown }>();

export async function health(deps: Deps) {
  let database: CheckState = 'ok';
  try {
    let ping = pingStatements.get(deps.sqlite);
    if (!ping) pingStatements.set(deps.sqlite, (ping = deps.sqlite.prepare('select 1')));
    ping.get();
  } catch {
    database = 'error';
  }
  const checks = {
    database,
    collab: await capabilityState(deps, 'collab'),
    pdf_export: await capabilityState(deps, 'pdf_export'),
  };
  const failing = Object.values(checks).some((s) => s === 'error' || s === 'unavailable');
  return { status: failing ? ('degraded' as const) : ('ok' as const), checks };
}

export async function features(deps: Deps) {
  return {
    version: serverVersion,
    features: {
      collab: (await capabilityState(deps, 'collab')) === 'ok',
      pdf_export: (await capabilityState(deps, 'pdf_export')) === 'ok',
      /** Fonts for every script PDFs print (CJK, Arabic, Hebrew, Devanagari, Cyrillic, Greek, emoji). */
      pdf_fonts: (await scriptsWithoutFonts()).length === 0,
      competencies: true,
      gamification: true,
      sequencing: true,
      webhooks: true,
      lti: true,
      saml: true,
      oidc: true,
      oneroster: true,
      migration: true,
      /** Invitations and password resets go out by mail (SMTP_URL and MAIL_FROM set). */
      email: mailConfigured(deps.config),
    },
  };
}
