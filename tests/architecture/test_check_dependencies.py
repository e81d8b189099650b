"""The component-dependency check passes on the tree and catches each kind of violation on a
small synthetic tree (so a new violation in the real tree would fail this suite)."""
import os
import textwrap

import check_dependencies

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(text))


def small_tree(root):
    """base <- store <- analysis, as STYLE.md allows."""
    write(root, "src/base/CMakeLists.txt", """
        add_library(stepscope_base STATIC status.cc)
        add_library(stepscope::base ALIAS stepscope_base)
    """)
    write(root, "src/base/status.cc", '#include "base/status.h"\n')
    write(root, "src/store/CMakeLists.txt", """
        add_library(stepscope_store STATIC log.cc)
        add_library(stepscope::store ALIAS stepscope_store)
        target_link_libraries(stepscope_store PUBLIC stepscope::base)
        stepscope_add_unittest(store_unittests SOURCES log_unittest.cc LIBS stepscope::store stepscope::analysis)
    """)
    write(root, "src/store/log.cc", '#include "store/log.h"\n#include "base/status.h"\n')
    write(root, "src/store/log_unittest.cc", '#include "analysis/model.h"\n')
    write(root, "src/analysis/CMakeLists.txt", """
        add_library(stepscope_analysis STATIC model.cc)
        add_library(stepscope::analysis ALIAS stepscope_analysis)
        target_link_libraries(stepscope_analysis
          PUBLIC stepscope::base stepscope::store)
    """)
    write(root, "src/analysis/model.cc", '#include "analysis/model.h"\n#include "base/status.h"\n#include "store/log.h"\n')


def test_the_repository_follows_the_dependency_direction():
    assert check_dependencies.violations(REPO) == []


def test_a_clean_tree_passes_and_tests_may_include_anything(tmp_path):
    small_tree(str(tmp_path))
    assert check_dependencies.violations(str(tmp_path)) == []


def test_an_include_against_the_direction_is_caught(tmp_path):
    small_tree(str(tmp_path))
    write(str(tmp_path), "src/store/reader.cc", '#include "analysis/model.h"\n')
    assert check_dependencies.violations(str(tmp_path)) == [
        "src/store/reader.cc: store includes analysis, against STYLE.md's dependency direction"]


def test_an_include_without_a_link_is_caught(tmp_path):
    small_tree(str(tmp_path))
    write(str(tmp_path), "src/analysis/CMakeLists.txt", """
        add_library(stepscope_analysis STATIC model.cc)
        add_library(stepscope::analysis ALIAS stepscope_analysis)
        target_link_libraries(stepscope_analysis PUBLIC stepscope::store)
    """)
    assert check_dependencies.violations(str(tmp_path)) == [
        "src/analysis/model.cc: analysis includes base without linking it"]


def test_a_link_against_the_direction_or_unused_is_caught(tmp_path):
    small_tree(str(tmp_path))
    write(str(tmp_path), "src/base/CMakeLists.txt", """
        add_library(stepscope_base STATIC status.cc)
        add_library(stepscope::base ALIAS stepscope_base)
        target_link_libraries(stepscope_base PRIVATE stepscope::store)
    """)
    write(str(tmp_path), "src/analysis/model.cc", '#include "analysis/model.h"\n#include "base/status.h"\n')
    assert check_dependencies.violations(str(tmp_path)) == [
        "analysis: target_link_libraries(stepscope_analysis ...) links store, which none of its sources include",
        "base: target_link_libraries(stepscope_base ...) links store, against STYLE.md's dependency direction",
    ]


def importers_tree(root):
    """The small tree plus importers/{common,kineto}, each folder its own target over analysis."""
    small_tree(root)
    write(root, "src/importers/CMakeLists.txt", "add_subdirectory(common)\nadd_subdirectory(kineto)\n")
    write(root, "src/importers/common/CMakeLists.txt", """
        add_library(stepscope_importer_common STATIC gzip_text.cc)
        add_library(stepscope::importer_common ALIAS stepscope_importer_common)
        target_link_libraries(stepscope_importer_common PUBLIC stepscope::base)
    """)
    write(root, "src/importers/common/gzip_text.cc", '#include "importers/common/gzip_text.h"\n#include "base/status.h"\n')
    write(root, "src/importers/kineto/CMakeLists.txt", """
        add_library(stepscope_importer_kineto STATIC kineto_importer.cc)
        add_library(stepscope::importer_kineto ALIAS stepscope_importer_kineto)
        target_link_libraries(stepscope_importer_kineto
          PUBLIC stepscope::analysis stepscope::base PRIVATE stepscope::importer_common)
    """)
    write(root, "src/importers/kineto/kineto_importer.cc",
          '#include "importers/kineto/kineto_importer.h"\n#include "analysis/model.h"\n'
          '#include "importers/common/gzip_text.h"\n')


def test_the_importer_folders_are_one_component_above_analysis(tmp_path):
    importers_tree(str(tmp_path))
    assert check_dependencies.violations(str(tmp_path)) == []


def test_analysis_reaching_into_an_importer_is_caught(tmp_path):
    importers_tree(str(tmp_path))
    write(str(tmp_path), "src/analysis/run_loader.cc", '#include "importers/kineto/kineto_importer.h"\n')
    write(str(tmp_path), "src/analysis/CMakeLists.txt", """
        add_library(stepscope_analysis STATIC model.cc run_loader.cc)
        add_library(stepscope::analysis ALIAS stepscope_analysis)
        target_link_libraries(stepscope_analysis
          PUBLIC stepscope::base stepscope::store PRIVATE stepscope::importer_kineto)
    """)
    assert check_dependencies.violations(str(tmp_path)) == [
        "src/analysis/run_loader.cc: analysis includes importers, against STYLE.md's dependency direction",
        "analysis: target_link_libraries(stepscope_analysis ...) links importers, "
        "against STYLE.md's dependency direction",
    ]

def launcher_tree(root):
    """The small tree plus a launcher over store and a command line over the launcher."""
    small_tree(root)
    write(root, "src/launcher/CMakeLists.txt", """
        add_library(stepscope_launcher STATIC run_job.cc)
        add_library(stepscope::launcher ALIAS stepscope_launcher)
        target_link_libraries(stepscope_launcher PUBLIC stepscope::store)
    """)
    write(root, "src/launcher/run_job.cc", '#include "launcher/run_job.h"\n#include "store/log.h"\n')
    write(root, "src/cli/CMakeLists.txt", """
        add_library(stepscope_cli_lib STATIC run_command.cc)
        target_link_libraries(stepscope_cli_lib PUBLIC stepscope::launcher)
    """)
    write(root, "src/cli/run_command.cc", '#include "cli/run_command.h"\n#include "launcher/run_job.h"\n')


def test_the_command_line_calls_the_launcher_and_never_the_reverse(tmp_path):
    launcher_tree(str(tmp_path))
    assert check_dependencies.violations(str(tmp_path)) == []
    write(str(tmp_path), "src/launcher/run_job.cc",
          '#include "launcher/run_job.h"\n#include "store/log.h"\n#include "cli/report_command.h"\n')
    assert check_dependencies.violations(str(tmp_path)) == [
        "src/launcher/run_job.cc: launcher includes cli, against STYLE.md's dependency direction"]


def test_the_command_line_exits_non_zero_with_one_line_per_violation(tmp_path, capsys):
    small_tree(str(tmp_path))
    write(str(tmp_path), "src/store/reader.cc", '#include "analysis/model.h"\n')
    assert check_dependencies.main(["check", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == ["src/store/reader.cc: store includes analysis, against STYLE.md's dependency direction",
                   "1 dependency violation(s); STYLE.md §1 gives the direction"]
