# One scheme for every test: ctest name AREA.NAME, label cpu or gpu; GPU tests exit 77 (skipped)
# without a device. tests/README.md says where each kind of test goes.
#
# headroom_test(AREA NAME SOURCES f.cpp... [LIBS lib...] [OWN_MAIN])
#   a GoogleTest executable AREA_NAME_test (gtest_main unless OWN_MAIN), ctest AREA.NAME, label cpu.
# headroom_command_test(AREA NAME [LABEL gpu] COMMAND cmd...)
#   any command (a script, another binary with arguments), ctest AREA.NAME, label cpu or gpu.
function(headroom_test area name)
  cmake_parse_arguments(T "OWN_MAIN" "" "SOURCES;LIBS" ${ARGN})
  set(exe ${area}_${name}_test)
  add_executable(${exe} ${T_SOURCES})
  target_link_libraries(${exe} PRIVATE ${T_LIBS} GTest::gtest)
  if(NOT T_OWN_MAIN)
    target_link_libraries(${exe} PRIVATE GTest::gtest_main)
  endif()
  target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR})
  # Test code at -O1: a third to a half less compile time per unit (cli_help 7.0 s -> 4.9 s,
  # sim_kernels 15.7 s -> 8.9 s), and the libraries the tests exercise keep the build's own level.
  target_compile_options(${exe} PRIVATE $<$<CONFIG:Release>:-O1>)
  add_test(NAME ${area}.${name} COMMAND ${exe})
  set_tests_properties(${area}.${name} PROPERTIES LABELS cpu)
endfunction()

function(headroom_command_test area name)
  cmake_parse_arguments(T "" "LABEL" "COMMAND" ${ARGN})
  if(NOT T_LABEL)
    set(T_LABEL cpu)
  endif()
  add_test(NAME ${area}.${name} COMMAND ${T_COMMAND})
  set_tests_properties(${area}.${name} PROPERTIES LABELS ${T_LABEL})
  if(T_LABEL STREQUAL "gpu")
    set_tests_properties(${area}.${name} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endfunction()
