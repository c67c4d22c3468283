"""Animal-AI arena configurations: typed model, placement, YAML, validation, testbed catalog."""

from llm_aai.arena.catalog import (
    ARENAS_ENV,
    BASE_URL,
    LEVEL_NAMES,
    TESTBED_COMMIT,
    ArenaNotFoundError,
    Task,
    TaskSelectionError,
    all_tasks,
    cache_dir,
    checksums,
    children_subset,
    resolve_arena_path,
    select_tasks,
)
from llm_aai.arena.checksum import file_sha256
from llm_aai.arena.errors import ArenaError, PlacementError
from llm_aai.arena.fetch import FetchError, FetchReport, fetch_testbed
from llm_aai.arena.model import RANDOM, RGB, Arena, ArenaConfig, Item, SourceLocation, Vector3
from llm_aai.arena.objects import OBJECTS, Kind, ObjectSpec, lookup
from llm_aai.arena.placement import (
    PlacedArena,
    PlacedObject,
    collision_shapes,
    place_arena,
    spawn_box,
)
from llm_aai.arena.validate import errors_only, validate_config
from llm_aai.arena.yaml_io import check_file, dump_config, load_config, loads_config

__all__ = [
    "ARENAS_ENV",
    "BASE_URL",
    "LEVEL_NAMES",
    "OBJECTS",
    "RANDOM",
    "RGB",
    "TESTBED_COMMIT",
    "Arena",
    "ArenaConfig",
    "ArenaError",
    "ArenaNotFoundError",
    "FetchError",
    "FetchReport",
    "Item",
    "Kind",
    "ObjectSpec",
    "PlacedArena",
    "PlacedObject",
    "PlacementError",
    "SourceLocation",
    "Task",
    "TaskSelectionError",
    "Vector3",
    "all_tasks",
    "cache_dir",
    "check_file",
    "checksums",
    "children_subset",
    "collision_shapes",
    "dump_config",
    "errors_only",
    "fetch_testbed",
    "file_sha256",
    "load_config",
    "loads_config",
    "lookup",
    "place_arena",
    "resolve_arena_path",
    "select_tasks",
    "spawn_box",
    "validate_config",
]
