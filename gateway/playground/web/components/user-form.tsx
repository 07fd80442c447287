// The fields of a user that an admin (or a team admin) sets: name, role, team, budget and its
// period, and the priority of its requests when they wait (queue mode). Shared by the
// create form (Users) and the edit form (a user's page).
import type { User } from '../api.ts';
import { SelectField, TextField, type Form, type Values } from '../forms.tsx';
import { money } from '../format.ts';
import { BUDGET_PERIODS, options } from '../kinds.ts';
import { check, decimal, integer, required, resourceId } from '../rules.ts';

export type UserField = 'id' | 'name' | 'role' | 'team' | 'budget' | 'period' | 'priority';

export const EMPTY_USER: Values<UserField> = { id: '', name: '', role: 'user', team: '', budget: '', period: '', priority: '' };

export const USER_PARAMS: Record<string, UserField> = {
  id: 'id',
  name: 'name',
  role: 'role',
  team: 'team',
  budget: 'budget',
  budget_period: 'period',
  priority: 'priority',
};

export function userValues(user: User): Values<UserField> {
  return {
    id: user.id,
    name: user.name,
    role: user.role,
    team: user.team ?? '',
    budget: user.budget === null ? '' : money(user.budget),
    period: user.budget_period ?? '',
    priority: user.priority === null ? '' : String(user.priority),
  };
}

export function validateUser(v: Values<UserField>) {
  return {
    id: check(v.id.trim(), [resourceId], true) ?? undefined,
    name: check(v.name, [required]) ?? (v.name.length > 200 ? 'At most 200 characters.' : undefined),
    budget: check(v.budget, [decimal(6)], true) ?? undefined,
    team: check(v.team.trim(), [resourceId], true) ?? undefined,
    priority: check(v.priority, [integer(-10, 10)], true) ?? undefined,
  };
}

/** Budget as a decimal string (exact, as the API accepts), empty meaning unlimited (null). */
export function userBody(v: Values<UserField>) {
  return {
    name: v.name.trim(),
    role: v.role,
    team: v.team.trim() === '' ? null : v.team.trim(),
    budget: v.budget.trim() === '' ? null : v.budget.trim(),
    budget_period: v.period || null,
    priority: v.priority.trim() === '' ? null : Number(v.priority),
  };
}

export function UserFields({ form, creating }: { form: Form<UserField>; creating: boolean }) {
  return (
    <>
      <div class="row">
        {creating && <TextField form={form} name="id" label="Id (optional)" hint="Generated when empty (u-…)." />}
        <TextField form={form} name="name" label="Name" required />
        <SelectField
          form={form}
          name="role"
          label="Role"
          options={[
            ['user', 'user'],
            ['team_admin', "team admin (manages the team's users and keys)"],
            ['admin', 'admin (may use the admin API)'],
          ]}
        />
        <TextField form={form} name="team" label="Team (optional)" hint="A team's id. Empty: no team." />
      </div>
      <div class="row">
        <TextField form={form} name="budget" label="Budget" inputMode="decimal" hint="In the money of router prices. Empty: unlimited." />
        <SelectField form={form} name="period" label="Budget period" options={[['', 'none (never resets)'], ...options(BUDGET_PERIODS)]} />
        <TextField
          form={form}
          name="priority"
          label="Priority"
          inputMode="numeric"
          hint="-10 to 10: higher goes first when requests wait for a queue-mode router. Empty: the team's (0 without one)."
        />
      </div>
    </>
  );
}
