// The account directory's contract on Kubernetes mode's directory, against a real kube-apiserver,
// the operator and one Redis (support/cr-accounts-suite.ts).
import { describeCrAccounts } from './support/cr-accounts-suite.ts';

describeCrAccounts('one Redis');
