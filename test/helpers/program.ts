// Runs an independent client written in another language (Authlib in Python, go-oidc in Go) as a
// child process: one JSON argument in, its exit code and output back.
import { spawn } from 'node:child_process';

export interface ProgramResult {
  code: number | null;
  out: string;
  err: string;
}

export function runProgram(command: string, args: readonly string[]): Promise<ProgramResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    p.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, out, err }));
  });
}
