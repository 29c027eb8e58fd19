# Building with generators (dsl/Generator.h), in this tree and through find_package(AICF).
#
#   aicf_add_generator(my_gen SOURCES my_generators.cpp)
#   aicf_add_library(scale GENERATOR my_gen [GENERATOR_NAME scale] [FUNCTION_NAME scale]
#                    [TARGETS x86-64-v3-cuda-sm_80 x86-64-v3 x86-64] [CUBINS sm_80 sm_90]
#                    [PARAMS tile=32 in.type=float32])
#
# TARGETS (or TARGET, for one): what to compile for (default: host, the CPU building it). With
# several, most preferred first, the generator runs once per target and the library runs the
# first build the machine it runs on can (CPU features; a GPU for a target with one).
# CUBINS: GPU architectures the library also carries its kernels assembled for (by ptxas, at
# build time); a GPU of one of them loads that cubin, any other the PTX.
#   target_link_libraries(my_program PRIVATE scale)   # scale.h, and the runtime
#
# aicf_add_library runs the generator program at build time (again when it changes), in every
# build of the project as a library target would be built, and gives a target holding the
# static library and the folder of its header.

# A generator program: the sources that define and register generators, with a main() that
# compiles them (aicf::generator_main).
function(aicf_add_generator target)
  cmake_parse_arguments(GEN "" "" "SOURCES" ${ARGN})
  if(NOT GEN_SOURCES)
    message(FATAL_ERROR "aicf_add_generator(${target}): SOURCES is missing")
  endif()
  add_executable(${target} ${GEN_SOURCES})
  target_link_libraries(${target} PRIVATE AICF::aicf AICF::aicf_generator)
endfunction()

# A pipeline compiled ahead of time by a generator program, as a library target.
function(aicf_add_library name)
  cmake_parse_arguments(LIB "" "GENERATOR;GENERATOR_NAME;FUNCTION_NAME;TARGET"
                        "PARAMS;CUBINS;TARGETS" ${ARGN})
  if(NOT LIB_GENERATOR)
    message(FATAL_ERROR "aicf_add_library(${name}): GENERATOR (a generator program) is missing")
  endif()
  if(NOT LIB_GENERATOR_NAME)
    set(LIB_GENERATOR_NAME ${name})
  endif()
  if(NOT LIB_FUNCTION_NAME)
    set(LIB_FUNCTION_NAME ${name})
  endif()
  if(LIB_TARGET AND LIB_TARGETS)
    message(FATAL_ERROR "aicf_add_library(${name}): give TARGET or TARGETS, not both")
  endif()
  if(LIB_TARGETS)
    list(JOIN LIB_TARGETS "," LIB_TARGET)
  elseif(NOT LIB_TARGET)
    set(LIB_TARGET host)
  endif()
  if(LIB_CUBINS)
    list(JOIN LIB_CUBINS "," cubins)
    list(APPEND LIB_PARAMS "cubins=${cubins}")
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name}.aicf)
  set(archive ${dir}/${LIB_FUNCTION_NAME}.a)
  set(header ${dir}/${LIB_FUNCTION_NAME}.h)
  add_custom_command(
    OUTPUT ${archive} ${header}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${LIB_GENERATOR} -g ${LIB_GENERATOR_NAME} -f ${LIB_FUNCTION_NAME} -o ${dir}
            -e static_library,c_header target=${LIB_TARGET} ${LIB_PARAMS}
    DEPENDS ${LIB_GENERATOR}
    COMMENT "Generating ${LIB_FUNCTION_NAME} (${LIB_GENERATOR_NAME} ${LIB_PARAMS}, ${LIB_TARGET})"
    VERBATIM)
  add_custom_target(${name}_generated ALL DEPENDS ${archive} ${header})
  add_library(${name} INTERFACE)
  add_dependencies(${name} ${name}_generated)
  target_include_directories(${name} INTERFACE ${dir})
  # libmvec: the host code calls glibc's vector math where it vectorizes exp, log and the like.
  target_link_libraries(${name} INTERFACE ${archive} AICF::aicf_runtime mvec m)
  target_link_options(${name} INTERFACE "LINKER:--as-needed")
endfunction()
