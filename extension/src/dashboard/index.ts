// Dashboard entry: the person's history as charts, a table, a recommendation and exports (dashboard.ts).
import { mountDashboard } from './dashboard.js';

void mountDashboard();
