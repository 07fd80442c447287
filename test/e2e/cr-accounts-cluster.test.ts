// The account directory's contract on Kubernetes mode's directory, against a real kube-apiserver,
// the operator (a process of its own, on a redis+cluster:// URL) and a Redis Cluster of three
// primaries with a replica each (support/cr-accounts-suite.ts).
import { describeCrAccounts } from './support/cr-accounts-suite.ts';

describeCrAccounts('a Redis Cluster');
