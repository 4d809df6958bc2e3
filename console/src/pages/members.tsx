import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ErrorBanner, Loading } from '../ui/feedback.tsx';
import { Field, FormError, useApiForm } from '../ui/form.tsx';
import { Page } from '../ui/page.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { Section } from '../ui/section.tsx';
import { Table } from '../ui/table.tsx';
import { FormActions } from '../ui/form-actions.tsx';
import { type ListBody } from './org/common.tsx';

interface User {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  role: string;
  workspace_ids?: string[];
}
interface WorkspaceUser extends User {
  org_role: string;
  status: string;
}

const ORG_ROLES = ['owner', 'admin', 'member'];
const WORKSPACE_ROLES = ['admin', 'manager', 'member'];
const nameOf = (u: User) => [u.first_name, u.last_name].filter(Boolean).join(' ') || '—';

/** The organisation's users and the members of the workspace picked in the top bar. */
export default function MembersPage() {
  const { can } = useAuth();
  return (
    <Page title="Members">
      {can('organisation_users.list') ? <OrganisationUsers /> : null}
      {can('workspace_users.list') ? <WorkspaceMembers /> : null}
    </Page>
  );
}

function RoleSelect({
  label,
  value,
  roles,
  onChange,
  disabled,
}: {
  label: string;
  value: string;
  roles: readonly string[];
  onChange: (role: string) => void;
  disabled?: boolean;
}) {
  return (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.target.value)} disabled={disabled}>
      {roles.map((r) => (
        <option key={r}>{r}</option>
      ))}
    </select>
  );
}

function OrganisationUsers() {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const [adding, setAdding] = useState(false);
  const [email, setEmail] = useState('');
  const users = useQuery({
    queryKey: ['org-users', email],
    queryFn: () =>
      get<ListBody<User>>('/v1/admin/users', { email: email.trim() || undefined, page_size: 100 }),
  });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['org-users'] });
  const [changed, setChanged] = useState<string | null>(null);
  const changeRole = useMutation({
    mutationFn: ({ id, role }: { id: string; role: string; email: string }) =>
      put(`/v1/admin/users/${id}`, { role }),
    onMutate: () => setChanged(null),
    onSuccess: (_result, { email, role }) => {
      setChanged(`${email} is now ${role === 'admin' ? 'an' : 'a'} ${role}.`);
      refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => del(`/v1/admin/users/${id}`),
    onSuccess: refresh,
  });
  return (
    <Section
      title="Organisation users"
      id="org-users"
      actions={
        can('organisation_users.create') ? (
          <button type="button" onClick={() => setAdding(true)}>
            Add user
          </button>
        ) : null
      }
    >
      <p className="muted">
        Users are added directly (there are no email invitations); they sign in with the organisation&apos;s
        SSO.
      </p>
      {adding ? (
        <AddUser
          onDone={() => {
            setAdding(false);
            refresh();
          }}
        />
      ) : null}
      <label className="field">
        <span>Filter by email</span>
        <input type="search" value={email} onChange={(e) => setEmail(e.target.value)} />
      </label>
      {users.isPending ? <Loading /> : null}
      <ErrorBanner error={users.error ?? changeRole.error ?? remove.error} />
      {changed ? (
        <p role="status" className="ok-text">
          {changed}
        </p>
      ) : null}
      <Table
        label="Organisation users"
        rows={users.data?.data}
        rowKey={(u) => u.id}
        empty="No users."
        columns={[
          { header: 'Email', cell: (u) => u.email },
          { header: 'Name', cell: nameOf },
          {
            header: 'Role',
            cell: (u) => (
              <RoleSelect
                label={`Role of ${u.email}`}
                value={u.role}
                roles={ORG_ROLES}
                disabled={!can('organisation_users.update') || changeRole.isPending}
                onChange={(role) => changeRole.mutate({ id: u.id, role, email: u.email })}
              />
            ),
          },
          {
            header: 'Actions',
            hidden: true,
            cell: (u) =>
              can('organisation_users.delete') ? (
                <ConfirmButton
                  label={`Remove ${u.email}`}
                  question={`Remove ${u.email} from the organisation?`}
                  onConfirm={() => remove.mutate(u.id)}
                />
              ) : null,
          },
        ]}
      />
    </Section>
  );
}

function AddUser({ onDone }: { onDone: () => void }) {
  const [email, setEmail] = useState('');
  const [first, setFirst] = useState('');
  const [last, setLast] = useState('');
  const [role, setRole] = useState('member');
  const form = useApiForm(
    () =>
      post('/v1/admin/users', {
        email: email.trim(),
        role,
        ...(first.trim() ? { first_name: first.trim() } : {}),
        ...(last.trim() ? { last_name: last.trim() } : {}),
      }),
    onDone,
  );
  return (
    <form className="card" aria-label="Add user" onSubmit={(e) => void form.onSubmit(e)}>
      <div className="org-form-grid">
        <Field label="Email" error={form.fieldError('email')}>
          <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
        </Field>
        <Field label="First name" error={form.fieldError('first_name')}>
          <input value={first} onChange={(e) => setFirst(e.target.value)} />
        </Field>
        <Field label="Last name" error={form.fieldError('last_name')}>
          <input value={last} onChange={(e) => setLast(e.target.value)} />
        </Field>
        <Field label="Organisation role" error={form.fieldError('role')}>
          <select value={role} onChange={(e) => setRole(e.target.value)}>
            {ORG_ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </Field>
      </div>
      <FormError error={form.error} fields={['email', 'first_name', 'last_name', 'role']} />
      <FormActions busy={form.busy} submit="Add user" onCancel={onDone} />
    </form>
  );
}

function WorkspaceMembers() {
  const { can, workspaceId } = useAuth();
  const queryClient = useQueryClient();
  const members = useQuery({
    queryKey: ['workspace-users', workspaceId],
    queryFn: () =>
      get<ListBody<WorkspaceUser>>(`/v1/admin/workspaces/${workspaceId}/users`, { page_size: 100 }),
    enabled: Boolean(workspaceId),
  });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['workspace-users', workspaceId] });
  const changeRole = useMutation({
    mutationFn: ({ id, role }: { id: string; role: string }) =>
      put(`/v1/admin/workspaces/${workspaceId}/users/${id}`, { role }),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: (id: string) => del(`/v1/admin/workspaces/${workspaceId}/users/${id}`),
    onSuccess: refresh,
  });
  return (
    <Section title="Workspace members" id="workspace-members">
      {!workspaceId ? <p className="muted">Pick a workspace in the top bar.</p> : null}
      {members.isPending && workspaceId ? <Loading /> : null}
      <ErrorBanner error={members.error ?? changeRole.error ?? remove.error} />
      <Table
        label="Workspace members"
        rows={members.data?.data}
        rowKey={(u) => u.id}
        empty="No members in this workspace."
        columns={[
          { header: 'Email', cell: (u) => u.email },
          { header: 'Name', cell: nameOf },
          {
            header: 'Workspace role',
            cell: (u) => (
              <RoleSelect
                label={`Workspace role of ${u.email}`}
                value={u.role}
                roles={WORKSPACE_ROLES}
                disabled={!can('workspace_users.update') || changeRole.isPending}
                onChange={(role) => changeRole.mutate({ id: u.id, role })}
              />
            ),
          },
          { header: 'Status', cell: (u) => u.status },
          {
            header: 'Actions',
            hidden: true,
            cell: (u) =>
              can('workspace_users.delete') ? (
                <ConfirmButton
                  label={`Remove ${u.email} from the workspace`}
                  question={`Remove ${u.email} from this workspace?`}
                  onConfirm={() => remove.mutate(u.id)}
                />
              ) : null,
          },
        ]}
      />
      {workspaceId && can('workspace_users.create') && can('organisation_users.list') ? (
        <AddMember workspaceId={workspaceId} onDone={refresh} />
      ) : null}
    </Section>
  );
}

function AddMember({ workspaceId, onDone }: { workspaceId: string; onDone: () => void }) {
  const users = useQuery({
    queryKey: ['org-users', ''],
    queryFn: () => get<ListBody<User>>('/v1/admin/users', { page_size: 100 }),
  });
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState('member');
  const form = useApiForm(
    () => post(`/v1/admin/workspaces/${workspaceId}/users`, { users: [{ id: userId, role }] }),
    () => {
      setUserId('');
      onDone();
    },
  );
  const fieldError = (name: string) => form.fieldError(`users[0].${name}`) ?? form.fieldError(name);
  return (
    <form aria-label="Add a member" className="card" onSubmit={(e) => void form.onSubmit(e)}>
      <h3>Add a member</h3>
      <div className="org-form-grid">
        <Field label="User" error={fieldError('id')}>
          <select value={userId} onChange={(e) => setUserId(e.target.value)} required>
            <option value="">Choose a user…</option>
            {users.data?.data.map((u) => (
              <option key={u.id} value={u.id}>
                {u.email}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Workspace role" error={fieldError('role')}>
          <select value={role} onChange={(e) => setRole(e.target.value)}>
            {WORKSPACE_ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </Field>
      </div>
      <FormError error={form.error} fields={['users', 'id', 'role']} />
      <button type="submit" disabled={form.busy || !userId}>
        Add to workspace
      </button>
    </form>
  );
}
