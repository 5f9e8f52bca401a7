import { ROLE } from '../accounts/rules.ts';

/** Who is asking: administrators see every user's rows, everyone else only their own. */
export interface Actor {
  id: number;
  role: number;
}

export const isAdmin = (actor: Actor) => actor.role >= ROLE.admin;
