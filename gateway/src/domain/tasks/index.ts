export {
  pollPlatform,
  startTaskEngine,
  TASK_FAILURE,
  type TaskEngineConfig,
  type TaskPlatform,
  type TaskRecord,
  type TaskSource,
  type TaskUpdate,
} from './engine.ts';
export {
  type MidjourneyFilters,
  scopeMidjourneyQuery,
  scopeTaskQuery,
  type TaskFilters,
} from './filters.ts';
export { type TaskList, TaskService } from './service.ts';
export { type MidjourneyView, midjourneyView, type TaskView, taskView } from './view.ts';
