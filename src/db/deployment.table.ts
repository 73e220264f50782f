import { tableColumns } from './table-columns.js';

/** Facts about the deployments that used this database, by key (migration 0017). */
export interface DeploymentTable {
  key: string;
  value: string;
}
export const DEPLOYMENT_COLUMNS = tableColumns<DeploymentTable>()({
  key: 'not null',
  value: 'not null',
});
